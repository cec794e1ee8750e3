#!/usr/bin/env bash
# call E (session 15): the suites of every map whose uniform batches changed (core tile_op_body's block-summed counts; H64
# thread per operation) on the GPU; memcheck/synccheck on H64 and open addressing, racecheck on those and on the cache suite
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/tests/*.gz; do gunzip -f $f; done
chmod +x $B/tests/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_MODULES="hopscotch_buckets open_addressing cuckoo chained hopscotch" WARPKV_GPU_SANITIZE_MODULES="hopscotch_buckets open_addressing" WARPKV_GPU_SANITIZERS="memcheck synccheck racecheck" OUT=$OUT/e timeout 440 scripts/gpu-check > $OUT/check-e.txt 2>&1; echo "gpu-check rc $? $(( $(date +%s)-t0 )) s"
grep "registers \]" $OUT/check-e.txt | head -20
tail -25 $OUT/check-e.txt
left=$(( 580 - ($(date +%s)-t0) ))
if [ $left -gt 30 ]; then
  WARPKV_TEST_BACKEND=cuda WARPKV_TEST_SCALE=0.02 timeout $((left-5)) compute-sanitizer --tool racecheck --error-exitcode 1 $B/tests/warpkv_cache_tests --gtest_filter='-CacheConcurrency.SeveralHostThreadsOnOneCache:CacheSubmitter.*:CacheResident.ConcurrentBatches*' > $OUT/racecheck-cache.txt 2>&1; echo "racecheck cache rc $? $(( $(date +%s)-t0 )) s"
  grep -c "^\[       OK" $OUT/racecheck-cache.txt; tail -3 $OUT/racecheck-cache.txt
fi
for f in $OUT/e/test-*.json; do python3 -c "import json;d=json.load(open('$f'));print('$f',d['tests'],d['failures'])"; done
tar czf $OUT/e.tgz -C $OUT e && rm -rf $OUT/e
