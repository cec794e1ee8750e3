#!/usr/bin/env bash
# call I (session 27): V28 (value words loaded before they are stored, in chunks of 2 or 4 words a
# lane) against c5e96e6 (base), ab-cache at 128-byte values (dim 32) alternated twice, and at
# 32-byte values once each.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-cache-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
A=$R/call-i-ab-cache.jsonl
for v in base v28c2 v28c4 base v28c2 v28c4; do AB_VALUE_WORDS=16 timeout 40 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v-dim32 $?; done
for v in base v28c2 v28c4; do AB_VALUE_WORDS=4 timeout 30 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v-dim8 $?; done
python3 - $A <<'PY'
import json,sys
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['value_bytes'],r['load'],r['operation']),[]).append((r['tag'],round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, v)
PY
