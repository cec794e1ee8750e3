#!/usr/bin/env bash
# call C (session 26): 9631a41 (head) / V18 (no displacement: a key without a free slot in reach
# goes straight to the stash, stash 1/64 of the buckets) / V18b (V18 with a stash of 1/32)
# alternated via ab-h64m (inserts, hits, misses).
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-c-ab-h64m.jsonl
for v in head v18 v18b v18b v18 head; do timeout 60 $B/ab-h64m-$v $v 0.8,0.9,0.95 3 >> $J 2>> $R/ab.err; el ab-$v $?; done
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),round(r['miss_gops'],3),r['wrong_values'],r['stashed'],r['size']==r['n'],r['capacity']==r['capacity_after']))
for k,v in sorted(d.items()): print(k,v)
PY
tail -3 $R/ab.err
