#!/usr/bin/env bash
# call G (session 29): ab-cache, one_bucket_lru W 32 T 4 (arg 32): fb58580 (base) against V37
# (first_in_order by a tile minimum where a lane has 2+ slots of a bucket) and V38 (V37, and no
# expired-slot search without a clock), alternated three times; the default (arg 8) once each.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-cache-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-g-ab-cache.jsonl
for v in base:32 fio:32 v38:32 v38:32 fio:32 base:32 fio:32 base:32 v38:32 base:8 fio:8 v38:8; do b=${v%%:*}; a=${v##*:}; AB_VALUE_WORDS=4 timeout 60 $B/ab-cache-$b $b-w$a $a 0.5,0.75,1.0 5 >> $F 2>> $R/ab.err; el ab-$v $?; done
python3 - $F <<'PY'
import json,sys,statistics as st
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['load'],r['operation']),{}).setdefault(r['tag'],[]).append((round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, {t:(st.median([x[0] for x in xs]), [x[0] for x in xs], sum(x[1] for x in xs)) for t,xs in v.items()})
PY
cat $R/ab.err | tail -3
