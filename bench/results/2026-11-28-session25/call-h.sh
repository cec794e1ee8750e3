#!/usr/bin/env bash
# call H (session 25): H64 at tiles 1 / 2 / 4 (7d7c9db's headers; ab-h64 with the map's tile
# changed), alternated, LF 0.5-0.95.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-h64-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
R=$OUT/r; mkdir -p $R
J=$R/call-h-ab-h64-tiles.jsonl
for v in t1 t2 t4 t4 t2 t1; do timeout 60 $B/ab-h64-$v $v 0.5,0.8,0.9,0.95 3 >> $J 2>> $R/ab.err; echo ab-$v rc $?; done
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['stashed'],r['capacity']==r['capacity_after']))
for k,v in sorted(d.items()): print(k,v)
PY
tail -3 $R/ab.err
