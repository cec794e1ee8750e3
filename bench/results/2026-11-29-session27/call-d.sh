#!/usr/bin/env bash
# call D (session 27): e0d66a7 / V24 (bucket versions) / V25 (+ the complete pass gated by the
# kick gate word) alternated twice on ab-cache (kv_cache<u64, 8, 8>, the --hkv workload), V25 at
# W = 16 once, HKV ae24eec beside (dim 8).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/ab-cache-* $B/peers/bin/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-d-cache-hkv.jsonl
PEERS=hkv HKV_DIMS=8 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$(cat $B/commit) timeout 150 bash $B/peers/run-peers.sh $F > $R/peers-hkv.log 2>&1; el hkv $?
A=$R/call-d-ab-cache.jsonl
for v in old v24 v25 old v24 v25; do timeout 60 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v $?; done
timeout 60 $B/ab-cache-v25 v25 16 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-v25-w16 $?
tar czf $OUT/call-d.tgz -C $OUT r
python3 - $F <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    print('%-6s %-45s %-17s %.2f %.3f %s' % (r.get('peer','warpkv'), r.get('variant',''), r['operation'], r['load'], r['gops'], r.get('verified','')))
PY
python3 - $A <<'PY'
import json,sys
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['load'],r['operation']),[]).append(('%s/W%d' % (r['tag'], r['bucket_width']),round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, v)
PY
