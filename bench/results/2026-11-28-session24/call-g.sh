#!/usr/bin/env bash
# call G (session 24): H64 T=1, V2 (d11c6d2) against V8 (the complete insert goes straight to the locked path, no second place_external scan
# before claim_empty), alternated; ncu times.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/ab-h64-*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-g-ab-h64.jsonl
for v in v2 v8 v8 v2; do timeout 50 $B/ab-h64-$v $v 0.8,0.9,0.95 6 >> $J 2>> $R/ab.err; el ab-$v $?; done
timeout 60 ncu --kernel-name-base mangled --metrics gpu__time_duration.sum,launch__grid_size --csv --page details $B/ab-h64-v8 times 0.95 2 > $R/ncu-times-v8.csv 2> $R/ncu-times.err; el times $?
tar czf $OUT/call-g.tgz -C $OUT r
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['size'],r['capacity']==r['capacity_after'],r['stashed']))
for k,v in sorted(d.items()): print(k,v)
PY
grep -h 'gpu__time_duration' $R/ncu-times-v8.csv | awk -F'","' '{print $NF, substr($5,1,80)}' | head -12
