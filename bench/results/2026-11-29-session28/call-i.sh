#!/usr/bin/env bash
# call I (session 28): the λ 0.75 finds of 58b3714 (V33) / bb2b2cf (V34), alternated six times
# (calls D-F saw the one-lock variants 3-5 % lower there, with the same read kernel).
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-cache-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
A=$R/call-i-ab-cache.jsonl
for v in v33 v34 v34 v33 v33 v34 v34 v33 v33 v34 v34 v33; do AB_VALUE_WORDS=4 timeout 60 $B/ab-cache-$v $v 8 0.5,0.75 7 >> $A 2>> $R/ab.err; el ab-$v $?; done
python3 - $A <<'PY'
import json,sys,statistics as st
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['load'],r['operation'],r['tag']),[]).append(r['gkvs'])
for k,v in sorted(rows.items()): print(k, [round(x,3) for x in v], 'median', round(st.median(v),3))
PY
