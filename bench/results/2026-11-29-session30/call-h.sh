#!/usr/bin/env bash
# call H (session 30): the cache suite of the commit in `commit` (V39 + V42 lock groups, the new
# submitter) on the device with memcheck, racecheck, synccheck (gpu-check, prebuilt build/dev
# warpkv_cache_tests).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/build/tests/*.xz; do xz -dkf $f; done
chmod +x $B/build/tests/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
( export OUT=$R/check; WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B/build WARPKV_GPU_MODULES=cache WARPKV_GPU_PARALLEL=1 \
  WARPKV_GPU_SANITIZERS="memcheck racecheck synccheck" WARPKV_STEP_TIMEOUT_S=190 timeout 235 bash scripts/gpu-check > $R/check.log 2>&1 ); el gpu-check $?
tail -6 $R/check.log; grep -h "\[ registers\|PASSED\|FAILED\|SKIPPED \]" $R/check/test-cache.log | head -20
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $R/check/sanitize-*.log | sort | uniq -c
