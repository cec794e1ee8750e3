#!/usr/bin/env bash
# call A (session 30): ab-cache, one_bucket_lru W 32 T 4 (arg 32): 2309101 (base) against V39
# (lock groups), alternated three times; W 16 T 4 (arg 16) and the default (arg 8) once each.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-cache-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-a-ab-cache.jsonl
for v in base:32 v39:32 v39:32 base:32 base:32 v39:32 base:16 v39:16 v39:8 base:8; do b=${v%%:*}; a=${v##*:}; AB_VALUE_WORDS=4 timeout 90 $B/ab-cache-$b $b-w$a $a 0.5,0.75,1.0 5 >> $F 2>> $R/ab.err; el ab-$v $?; done
python3 - $F <<'PY'
import json,sys,statistics as st
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['load'],r['operation']),{}).setdefault(r['tag'],[]).append((round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, {t:(st.median([x[0] for x in xs]), [x[0] for x in xs], sum(x[1] for x in xs)) for t,xs in v.items()})
PY
tail -3 $R/ab.err
