#!/usr/bin/env bash
# call C (session 23): more launch shapes of the thread-per-operation kernels (ab-ipt.cu):
# block x ops per thread, 256-1 (HEAD) and 128-2 (call B's best) as anchors, alternated.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-ipt-* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-c-tpi-launch.jsonl
V="256-1 128-2 64-2 128-3 256-3 512-2 512-1 64-4"
for v in $V; do timeout 40 $B/ab-ipt-$v 26 fwd >> $J 2>> $R/ab-ipt.err; el $v $?; done
for v in $(echo $V | tr ' ' '\n' | tac); do timeout 40 $B/ab-ipt-$v 26 bwd >> $J 2>> $R/ab-ipt.err; el $v $?; done
tar czf $OUT/call-c.tgz -C $OUT r
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['map'],r['load_factor'],r['block'],r['ops_per_thread'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['size']==r['n']))
for k,v in sorted(d.items()): print(k,v)
PY
