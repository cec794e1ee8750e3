#!/usr/bin/env bash
# call F (session 26): the cache beside HierarchicalKV in one call: our rebuilt HKV driver (smoke
# run, then the --hkv workload at dim 8), `warpkv-bench cache --hkv --no-ycsb` of HEAD (commit
# file), and ab-cache (kv_cache<u64, 8, T>, T = 8 / 4) on the same workload.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/warpkv-bench $B/ab-cache-head $B/peers/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
C=$(cat $B/commit)
timeout 60 $B/peers/bin/hkv_driver --capacity-log2 20 --batch-log2 14 --repeats 2 --warmup 1 --out $R/call-f-hkv-smoke.jsonl > $R/hkv-smoke.log 2>&1; el hkv-smoke $?
tail -3 $R/hkv-smoke.log
F=$R/call-f-cache-hkv.jsonl
PEERS=hkv HKV_DIMS=8 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$C timeout 150 bash $B/peers/run-peers.sh $F > $R/peers-hkv.log 2>&1; el hkv $?
tail -3 $R/peers-hkv.log
WARPKV_COMMIT=$C timeout 150 $B/warpkv-bench cache --backend cuda --hkv --no-ycsb --out $F > $R/cache.log 2>&1; el cache $?
timeout 80 $B/ab-cache-head head 8,4 0.5,0.75,1.0 5 > $R/call-f-ab-cache.jsonl 2> $R/ab.err; el ab-cache $?
tar czf $OUT/call-f.tgz -C $OUT r
python3 - $F <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    print('%-6s %-45s %-17s %.2f %.3f %s' % (r.get('peer','warpkv'), r.get('variant',r.get('sync','')+'/'+r.get('layout','')), r['operation'], r['load'], r['gops'], r.get('verified','')))
PY
python3 - $R/call-f-ab-cache.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r['tile'], r['load'], '%-17s' % r['operation'], round(r['gkvs'],3), r['count'], r['wrong_values'])
PY
