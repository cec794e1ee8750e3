#!/usr/bin/env bash
# call D (session 26): 9631a41 (head) / V19 (the stash first, displacement only when the key's stash
# window is full; stash 1/64) / V19b (V19 with a stash of 1/32) alternated via ab-h64m.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-d-ab-h64m.jsonl
for v in head v19 v19b v19b v19 head; do timeout 60 $B/ab-h64m-$v $v 0.8,0.9,0.95 3 >> $J 2>> $R/ab.err; el ab-$v $?; done
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),round(r['miss_gops'],3),r['wrong_values'],r['stashed'],r['size']==r['n'],r['capacity']==r['capacity_after']))
for k,v in sorted(d.items()): print(k,v)
PY
tail -3 $R/ab.err
