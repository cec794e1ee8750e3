#!/usr/bin/env bash
# call G (session 17): the core suites after the split (CUDA units only / host units only), on the
# device, and compute-sanitizer memcheck on the batch-list tests.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done; chmod +x $B/warpkv_*_tests
export WARPKV_TEST_BACKEND=cuda
for t in core core_host; do timeout 100 $B/warpkv_${t}_tests > $OUT/test-$t.log 2>&1; echo "$t rc $?"; tail -3 $OUT/test-$t.log; done
WARPKV_TEST_SCALE=0.02 timeout 100 compute-sanitizer --tool memcheck $B/warpkv_core_tests --gtest_filter='MixedBatchPartition*:SecondPassList*' > $OUT/memcheck-core.log 2>&1; echo "memcheck rc $?"; tail -3 $OUT/memcheck-core.log
