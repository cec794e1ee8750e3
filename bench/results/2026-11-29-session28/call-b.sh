#!/usr/bin/env bash
# call B (session 28): ab-cache of f0b1109 (head) against V32 (the locked scan loads the eviction
# ranks only when the write must evict) and V33 (V32, and an insert into an empty slot does not
# store an expiry of 0 over the empty slot's 0), alternated three times at 32-byte values (dim 8),
# once each at 128-byte values (dim 32).
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-cache-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
A=$R/call-b-ab-cache.jsonl
for v in head v32 v33 v33 v32 head head v32 v33; do AB_VALUE_WORDS=4 timeout 60 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v-dim8 $?; done
for v in head v32 v33; do AB_VALUE_WORDS=16 timeout 60 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v-dim32 $?; done
python3 - $A <<'PY'
import json,sys
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['value_bytes'],r['load'],r['operation']),[]).append((r['tag'],round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, v)
PY
