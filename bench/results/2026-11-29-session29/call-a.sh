#!/usr/bin/env bash
# call A (session 29): ab-cache of the working tree (placement policy): the default design
# (tile arg 8: kv_cache<u64, 8, 8>) and one_bucket_lru at W 64 T 8 (arg 64) and W 32 T 4 (arg 32),
# alternated, HierarchicalKV ae24eec dim 8 beside, all rows in one file.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/ab-cache-* $B/peers/bin/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-a-cache-hkv.jsonl
PEERS=hkv HKV_DIMS=8 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$(cat $B/commit)+placement timeout 150 bash $B/peers/run-peers.sh $F > $R/peers-hkv.log 2>&1; el hkv $?
tail -3 $R/peers-hkv.log
for v in 8 64 32 64 8 32 8 64; do AB_VALUE_WORDS=4 timeout 60 $B/ab-cache-ob w$v $v 0.5,0.75,1.0 5 >> $F 2>> $R/ab.err; el ab-$v $?; done
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
