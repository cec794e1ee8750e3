#!/usr/bin/env bash
# call C (session 14): the suites whose code changed (H64: the neighbour path; cache: score policies
# and HKV API; cuckoo, chained, hopscotch: the hot-key race's fused rounds) on the GPU, sanitizers at reduced scale
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
M=${MODS:-"hopscotch_buckets cache"}
SM=${SMODS:-$M}
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_MODULES="$M" WARPKV_GPU_SANITIZE_MODULES="$SM" WARPKV_GPU_SANITIZERS="${SANS:-memcheck synccheck}" OUT=$OUT/c timeout ${LIMIT:-480} scripts/gpu-check > $OUT/check-c.txt 2>&1
echo "gpu-check rc $?"
if [ -n "${RACE_H64:-}" ]; then
  WARPKV_TEST_BACKEND=cuda WARPKV_TEST_SCALE=0.02 timeout ${RACE_H64} compute-sanitizer --tool racecheck --error-exitcode 1 $B/tests/warpkv_hopscotch_buckets_tests --gtest_filter='*FastLaunch*:*Neighbour*:*HotKeys*:*Stash*:*ManyFast*' > $OUT/racecheck-h64.txt 2>&1; echo "racecheck h64 rc $?"; tail -3 $OUT/racecheck-h64.txt
fi
tail -30 $OUT/check-c.txt
for f in $OUT/c/test-*.json; do python3 -c "import json;d=json.load(open('$f'));print('$f',d['tests'],d['failures'])"; done
tar czf $OUT/c.tgz -C $OUT c && rm -rf $OUT/c
