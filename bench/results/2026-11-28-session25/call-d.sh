#!/usr/bin/env bash
# call D (session 25): the fast insert kernel's register budget: V10 (48; ptxas uses 45) / b40 / b32
# alternated via ab-h64.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-h64-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
R=$OUT/r; mkdir -p $R
J=$R/call-d-ab-h64.jsonl
for v in v10 b40 b32 b32 b40 v10; do timeout 50 $B/ab-h64-$v $v 0.5,0.8,0.9,0.95 3 >> $J 2>> $R/ab.err; echo ab-$v rc $?; done
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['size'],r['capacity']==r['capacity_after'],r['stashed']))
for k,v in sorted(d.items()): print(k,v)
PY
tail -3 $R/ab.err
