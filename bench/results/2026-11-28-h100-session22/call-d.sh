#!/usr/bin/env bash
# call D (session 22): every suite on the device (all modules, concurrently), and
# compute-sanitizer memcheck, racecheck and synccheck on the reduced runs of core, cuckoo,
# open addressing and chained, as a second concurrent gpu-check. Built here (nvcc 13.0, sm_90).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/tests/*.xz; do xz -dkf $f; done
chmod +x $B/tests/* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_PARALLEL=1 WARPKV_STEP_TIMEOUT_S=540
WARPKV_GPU_MODULES="core core_host cuckoo open_addressing hopscotch_buckets hopscotch chained cache stm kmeans cpu vulkan" WARPKV_GPU_SANITIZERS=" " OUT=$OUT/check timeout 560 scripts/gpu-check > $OUT/check.txt 2>&1 &
WARPKV_GPU_MODULES="core cuckoo open_addressing chained" WARPKV_GPU_SKIP_TESTS=1 WARPKV_GPU_SANITIZERS="memcheck racecheck synccheck" OUT=$OUT/sanitize timeout 560 scripts/gpu-check > $OUT/sanitize.txt 2>&1 &
wait
echo "done $SECONDS s"
grep "PASSED\|FAILED\|== \|ERROR SUMMARY\|hazard\|rc \|ok \|fail\|timed out" $OUT/check.txt $OUT/sanitize.txt | head -70
tar czf $OUT/call-d.tgz -C $OUT check check.txt sanitize sanitize.txt
