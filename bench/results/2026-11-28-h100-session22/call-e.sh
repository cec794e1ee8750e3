#!/usr/bin/env bash
# call E (session 22): compute-sanitizer memcheck, racecheck and synccheck on the reduced runs of
# hopscotch buckets, hopscotch, cache, stm and kmeans (cpu and vulkan have no CUDA code to
# sanitize), two concurrent gpu-checks; and, beside them, the suites of hopscotch buckets, cuckoo and
# chained again (call D's H64 failures: the hot-key race's rehash after an async capacity error, now
# chained's pool only). Built here (nvcc 13.0, sm_90).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/tests/*.xz; do xz -dkf $f; done
chmod +x $B/tests/* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_PARALLEL=1 WARPKV_STEP_TIMEOUT_S=540
WARPKV_GPU_MODULES="hopscotch_buckets cuckoo chained" WARPKV_GPU_SANITIZERS=" " OUT=$OUT/check timeout 560 scripts/gpu-check > $OUT/check.txt 2>&1 &
WARPKV_GPU_MODULES="hopscotch_buckets cache" WARPKV_GPU_SKIP_TESTS=1 WARPKV_GPU_SANITIZERS="memcheck racecheck synccheck" OUT=$OUT/sanitize1 timeout 560 scripts/gpu-check > $OUT/sanitize1.txt 2>&1 &
WARPKV_GPU_MODULES="hopscotch stm kmeans" WARPKV_GPU_SKIP_TESTS=1 WARPKV_GPU_SANITIZERS="memcheck racecheck synccheck" OUT=$OUT/sanitize2 timeout 560 scripts/gpu-check > $OUT/sanitize2.txt 2>&1 &
wait
echo "done $SECONDS s"
grep "PASSED\|FAILED\|== \|ERROR SUMMARY\|hazard\|rc \|ok \|fail\|timed out" $OUT/check.txt $OUT/sanitize1.txt $OUT/sanitize2.txt | head -70
tar czf $OUT/call-e.tgz -C $OUT check check.txt sanitize1 sanitize1.txt sanitize2 sanitize2.txt
