#!/usr/bin/env bash
# call C (session 20): the suites whose code changed (core: handback lists and marked passes; the
# bulk maps' insert path; cuckoo's lock sets) on the device, concurrently, then memcheck and
# racecheck on the reduced core and cuckoo runs. 2c51e37's tree, built here (nvcc 13.0, sm_90).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/tests/*.xz; do xz -dkf $f; done
chmod +x $B/tests/* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_PARALLEL=1 WARPKV_GPU_MODULES="core core_host open_addressing cuckoo chained hopscotch_buckets hopscotch" WARPKV_GPU_SANITIZE_MODULES="core cuckoo" WARPKV_GPU_SANITIZERS="memcheck racecheck" WARPKV_STEP_TIMEOUT_S=200 OUT=$OUT/check timeout 250 scripts/gpu-check > $OUT/check.txt 2>&1; echo "gpu-check rc $?"
grep "PASSED\|FAILED\|== \|ERROR SUMMARY\|hazard\|rc \|ok \|fail\|timed out" $OUT/check.txt | head -40
tar czf $OUT/call-c.tgz -C $OUT check check.txt
