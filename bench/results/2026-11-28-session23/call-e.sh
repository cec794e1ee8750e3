#!/usr/bin/env bash
# call E (session 23): the core and open-addressing suites of 30e23dc on the device, and
# compute-sanitizer memcheck, racecheck and synccheck on their reduced runs (a second concurrent
# gpu-check). Built here (nvcc 13.0, sm_90).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/tests/*.xz; do xz -dkf $f; done
chmod +x $B/tests/* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_PARALLEL=1 WARPKV_STEP_TIMEOUT_S=400
WARPKV_GPU_MODULES="core open_addressing" WARPKV_GPU_SANITIZERS=" " OUT=$OUT/check timeout 420 scripts/gpu-check > $OUT/check.txt 2>&1 &
WARPKV_GPU_MODULES="core open_addressing" WARPKV_GPU_SKIP_TESTS=1 WARPKV_GPU_SANITIZERS="memcheck racecheck synccheck" OUT=$OUT/sanitize timeout 420 scripts/gpu-check > $OUT/sanitize.txt 2>&1 &
wait
echo "done $SECONDS s"
grep "PASSED\|FAILED\|== \|ERROR SUMMARY\|hazard\|rc \|ok \|fail\|timed out\|registers \]" $OUT/check.txt $OUT/sanitize.txt | head -70
grep -rh "registers \]" $OUT/check | head -20
tar czf $OUT/call-e.tgz -C $OUT check check.txt sanitize sanitize.txt
