#!/usr/bin/env bash
# call B (session 29): ab-cache (working tree: one-bucket read tile 4): default (8), one bucket
# W 64 T 8 (64), W 32 T 8 (33), W 32 T 4 (32), no digests W 16 T 4 (16) and W 32 T 4 (34).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/ab-cache-* $B/peers/bin/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-b-ab-cache.jsonl
for v in 8 64 33 32 16 34 8 34 16 32 33 64; do AB_VALUE_WORDS=4 timeout 60 $B/ab-cache-ob2 w$v $v 0.5,0.75,1.0 5 >> $F 2>> $R/ab.err; el ab-$v $?; done
python3 - $F <<'PY'
import json,sys
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if 'peer' in r: print('%-6s %-45s %-17s %.2f %.3f %s' % (r.get('peer'), r.get('variant',''), r['operation'], r['load'], r['gops'], r.get('verified',''))); continue
    rows.setdefault((r['load'],r['operation']),[]).append((r['tag'],round(r['gkvs'],3),r['wrong_values'],r['size']))
for k,v in rows.items(): print(k, v)
PY
cat $R/ab.err | tail -5
