#!/usr/bin/env bash
# call B (session 24): H64 T=1, V2 (656220f's headers) against V3 (experiment: the fast kernel hands
# a key whose home is full back to the listed complete pass instead of placing it itself),
# alternated; then 656220f's H64 suite on the device, memcheck / synccheck on its reduced run and
# racecheck split in four filters (one step did not finish in 540 s before).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz $B/tests/*.xz; do xz -dkf $f; done
chmod +x $B/ab-h64-* $B/tests/* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-b-ab-h64.jsonl
for v in v2 v3 v3 v2; do timeout 50 $B/ab-h64-$v $v >> $J 2>> $R/ab.err; el ab-$v $?; done
T=$B/tests/warpkv_hopscotch_buckets_tests
export WARPKV_TEST_BACKEND=cuda
timeout 200 $T > $R/test.log 2>&1 & 
export WARPKV_TEST_SCALE=0.02
S="compute-sanitizer --error-exitcode 1"
timeout 330 $S --tool memcheck $T --gtest_filter='*-*FailedAllocationLeavesTheMapAsItWas*' > $R/memcheck.log 2>&1 &
timeout 330 $S --tool synccheck $T > $R/synccheck.log 2>&1 &
i=0; for f in 'HopscotchBuckets/MapSuite/0.*:HopscotchBucketsKernels.*' 'HopscotchBuckets/MapSuite/1.*:HopscotchBuckets/MapSuite/2.*' 'H64/0.*' 'H64/1.*'; do
  i=$((i+1)); timeout 330 $S --tool racecheck $T --gtest_filter="$f" > $R/racecheck-$i.log 2>&1 &
done
wait; el tests $?
tar czf $OUT/call-b.tgz -C $OUT r
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['size'],r['capacity']==r['capacity_after'],r['stashed']))
for k,v in sorted(d.items()): print(k,v)
PY
for f in $R/test.log $R/memcheck.log $R/synccheck.log $R/racecheck-*.log; do echo "== $f"; grep -h "PASSED\|FAILED\|ERROR SUMMARY\|RACECHECK SUMMARY\|tests ran" $f | tail -4; done
grep -h "registers" $R/test.log | head
