#!/usr/bin/env bash
# call J (session 28): an A/A control: one binary (58b3714, V33) under two tags, alternated six times, then V34
# once more beside it: the spread of paired medians that call I's V33 / V34 finds are judged against.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-cache-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
A=$R/call-j-ab-cache.jsonl
for v in v33a v33b v33b v33a v33a v33b v33b v33a v33a v33b v34 v33a; do AB_VALUE_WORDS=4 timeout 60 $B/ab-cache-$v $v 8 0.5,0.75 7 >> $A 2>> $R/ab.err; el ab-$v $?; done
python3 - $A <<'PY'
import json,sys,statistics as st
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['load'],r['operation'],r['tag']),[]).append(r['gkvs'])
for k,v in sorted(rows.items()): print(k, [round(x,3) for x in v], 'median', round(st.median(v),3))
PY
