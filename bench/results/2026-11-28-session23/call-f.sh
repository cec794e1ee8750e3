#!/usr/bin/env bash
# call F (session 23): launch shapes (block x ops per thread) of the other thread_per_op maps'
# one-lane kernels: cuckoo_map<u32,u32,1> and H64 (hopscotch buckets) T = 1, capacity ~2^27
# (ab-ipt2.cu), each shape twice, forward then backward.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab2-ipt-* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-f-tpi-launch-cuckoo-h64.jsonl
V="256-1 128-2 256-2 128-1"
for v in $V; do timeout 100 $B/ab2-ipt-$v 27 fwd >> $J 2>> $R/ab2.err; el $v $?; done
for v in $(echo $V | tr ' ' '\n' | tac); do timeout 100 $B/ab2-ipt-$v 27 bwd >> $J 2>> $R/ab2.err; el $v $?; done
tar czf $OUT/call-f.tgz -C $OUT r
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['map'],r['load_factor'],r['block'],r['ops_per_thread'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['size']==r['n'],r['capacity']==r['capacity_after']))
for k,v in sorted(d.items()): print(k,v)
PY
tail -5 $R/ab2.err
