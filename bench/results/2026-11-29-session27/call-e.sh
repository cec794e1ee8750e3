#!/usr/bin/env bash
# call E (session 27): ab-cache of e0d66a7 / V25b (landed form) / V26 (fast write pass at 48
# registers) / V27 (reads probe both buckets at once), alternated twice.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-cache-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
A=$R/call-e-ab-cache.jsonl
for v in old v25b w48 both old v25b w48 both; do timeout 60 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v $?; done
python3 - $A <<'PY'
import json,sys
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['load'],r['operation']),[]).append((r['tag'],round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, v)
PY
