#!/usr/bin/env bash
B=$(cd "$(dirname "$0")" && pwd)
xz -dkf $B/warpkv_core_tests.xz; chmod +x $B/warpkv_core_tests
export WARPKV_TEST_BACKEND=cuda
cd $B
for f in 'MixedBatchPartition*' 'SecondPassList*' '-MixedBatchPartition*:SecondPassList*'; do
  timeout 60 ./warpkv_core_tests --gtest_filter="$f" > $OUT/core-$RANDOM.log 2>&1; echo "filter $f rc $?"
done
tail -5 $OUT/core-*.log
which gdb && timeout 60 gdb -batch -ex run -ex bt --args ./warpkv_core_tests --gtest_filter='MixedBatchPartition*' 2>&1 | tail -30
timeout 60 compute-sanitizer --tool memcheck ./warpkv_core_tests --gtest_filter='MixedBatchPartition*' 2>&1 | tail -30
