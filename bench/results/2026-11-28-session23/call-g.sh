#!/usr/bin/env bash
# call G (session 23): session 22's one-thread fast insert (upsert_solo, 30 registers) under the
# launch shapes (ab-ipt.cu built on a copy of the headers with a46b715's upsert_solo), against the
# generic fast insert (34 registers) at 256 x 1 and 128 x 2, alternated forward and backward.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-g-solo-shapes.jsonl
V="ab-ipt-256-1 ab-solo-256-1 ab-ipt-128-2 ab-solo-128-2 ab-solo-256-2"
for v in $V; do timeout 40 $B/$v 26 "$v fwd" >> $J 2>> $R/ab.err; el $v $?; done
for v in $(echo $V | tr ' ' '\n' | tac); do timeout 40 $B/$v 26 "$v bwd" >> $J 2>> $R/ab.err; el $v $?; done
tar czf $OUT/call-g.tgz -C $OUT r
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['map'],r['load_factor'],r['tag'].split()[0])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['size']==r['n']))
for k,v in sorted(d.items()): print(k,v)
PY
