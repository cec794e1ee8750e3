#!/usr/bin/env bash
# call E2 (session 16): the cache suite of d2aaef0's tree (the lean write path) on the device
B=$(cd "$(dirname "$0")" && pwd)
xz -dkf $B/warpkv_cache_tests.xz && chmod +x $B/warpkv_cache_tests
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
WARPKV_TEST_BACKEND=cuda timeout 300 $B/warpkv_cache_tests > $OUT/cache-tests.log 2>&1; echo "tests rc $? $(( $(date +%s)-t0 )) s"
tail -3 $OUT/cache-tests.log; grep "registers\|FAILED" $OUT/cache-tests.log | head
left=$(( 420 - ($(date +%s)-t0) ))
[ $left -gt 40 ] && { WARPKV_TEST_BACKEND=cuda WARPKV_TEST_SCALE=0.02 timeout $((left-5)) compute-sanitizer --tool memcheck --error-exitcode 9 $B/warpkv_cache_tests --gtest_filter='-*Linearizab*:*FailedAllocationLeavesTheMapAsItWas*:*SeveralHostThreads*' > $OUT/cache-memcheck.log 2>&1; echo "memcheck rc $? $(( $(date +%s)-t0 )) s"; tail -3 $OUT/cache-memcheck.log; }
