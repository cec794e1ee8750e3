#!/usr/bin/env bash
# call A (session 28): ab-cache of f0b1109 (head) against V29 (the chunked value copy on the read
# side only), V30b (the fence after locking issued after the locked scan's loads), V30bc (V30b and
# both bucket locks attempted at once, relaxed, then one acquire fence) and V31 (an experiment, not
# sound: inserts not added to the occupancy shards), alternated twice at 32-byte values (dim 8);
# head and V29 once each at 128-byte values (dim 32).
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-cache-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
A=$R/call-a-ab-cache.jsonl
for v in head v29 v30b v30bc v31 v31 v30bc v30b v29 head; do AB_VALUE_WORDS=4 timeout 60 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v-dim8 $?; done
for v in head v29; do AB_VALUE_WORDS=16 timeout 60 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v-dim32 $?; done
python3 - $A <<'PY'
import json,sys
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['value_bytes'],r['load'],r['operation']),[]).append((r['tag'],round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, v)
PY
