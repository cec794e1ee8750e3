#!/usr/bin/env bash
# call F (session 15): vector_cache (typed vector values, merged e48ffeb) on the GPU: test_cache_typed.cpp built alone by nvcc; memcheck and racecheck
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/warpkv_typed_tests
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
WARPKV_TEST_BACKEND=cuda timeout 150 $B/warpkv_typed_tests > $OUT/typed.txt 2>&1; echo "typed rc $?"; tail -3 $OUT/typed.txt
WARPKV_TEST_BACKEND=cuda WARPKV_TEST_SCALE=0.05 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 $B/warpkv_typed_tests > $OUT/typed-memcheck.txt 2>&1; echo "memcheck rc $?"; tail -2 $OUT/typed-memcheck.txt
WARPKV_TEST_BACKEND=cuda WARPKV_TEST_SCALE=0.05 timeout 150 compute-sanitizer --tool synccheck --error-exitcode 1 $B/warpkv_typed_tests > $OUT/typed-synccheck.txt 2>&1; echo "synccheck rc $?"; tail -2 $OUT/typed-synccheck.txt
