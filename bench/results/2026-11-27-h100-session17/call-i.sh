#!/usr/bin/env bash
# call I (session 17): the cuckoo suite of the review mends' tree (make_room's shared bucket load,
# the mixed batch's listed growth re-runs) on the device, memcheck and racecheck on its reduced run.
B=$(cd "$(dirname "$0")" && pwd)
xz -dkf $B/warpkv_cuckoo_tests.xz; chmod +x $B/warpkv_cuckoo_tests
export WARPKV_TEST_BACKEND=cuda
timeout 250 $B/warpkv_cuckoo_tests > $OUT/test-cuckoo.log 2>&1; echo "tests rc $?"; grep -E "^\[  (PASSED|FAILED)|registers" $OUT/test-cuckoo.log
for tool in memcheck racecheck; do
  WARPKV_TEST_SCALE=0.02 timeout 100 compute-sanitizer --tool $tool $B/warpkv_cuckoo_tests --gtest_filter='Cuckoo/MapSuite/0.*:CuckooRaces*:CuckooRef*:CuckooFast*' > $OUT/$tool.log 2>&1; echo "$tool rc $?"; grep "SUMMARY" $OUT/$tool.log
done
