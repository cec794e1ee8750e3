#!/usr/bin/env bash
# call E (session 16): kv_cache's lean write path (d2aaef0, merged branch cachewrite) vs 60dc158, order-controlled, beside HKV;
# the cache suite on the device
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/main-bench $B/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
C=$OUT/call-e-cache-hkv.jsonl
WARPKV_COMMIT=60dc158 timeout 45 $B/main-bench cache --backend cuda --hkv --no-ycsb --out $C > $OUT/cache-60dc158.log 2>&1; echo "cache main rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=$NEW_COMMIT timeout 45 $B/new-bench cache --backend cuda --hkv --no-ycsb --out $C > $OUT/cache-new.log 2>&1; echo "cache new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=60dc158 timeout 45 $B/main-bench cache --backend cuda --hkv --no-ycsb --out $C > $OUT/cache-60dc158-2.log 2>&1; echo "cache main again rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=$NEW_COMMIT timeout 45 $B/new-bench cache --backend cuda --hkv --no-ycsb --out $C > $OUT/cache-new-2.log 2>&1; echo "cache new again rc $? $(( $(date +%s)-t0 )) s"
grep -h "G KV/s\|G ops\|rror" $OUT/cache-*.log | cut -c1-160 | head -60
PEERS=hkv CEILING=0 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$NEW_COMMIT timeout 100 bash $B/run-peers.sh $C > $OUT/hkv.log 2>&1; echo "hkv rc $? $(( $(date +%s)-t0 )) s"
