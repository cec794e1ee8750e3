#!/usr/bin/env bash
# call C (session 19): (1) cuckoo tile 1, the complete insert's register budget 64 / 48 / 40
# (ab-cuckoo-budget.cu built with exp-call-c.patch), alternated; (2) open addressing tile 1:
# NEW (lazy second halves) against 5a49153 (A: 4 slots per lane, both halves at once), alternated,
# cuco beside; (3) the open-addressing suite on the device, memcheck reduced if time is left.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz $B/tests/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/a-bench $B/ab-* $B/bin/* $B/tests/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
for v in 64 48 40 40 48 64; do timeout 40 $B/ab-slow-$v >> $R/call-c-ab-cuckoo-budget.jsonl 2>> $R/ab.err; el ab-$v $?; done
F=$R/call-c-static-oa.jsonl
S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 100 $B/new-bench $S --keys 2^26 --load-factors 0.8 > $R/oa-new-80.log 2>&1; el new-80 $?
WARPKV_COMMIT=5a49153 timeout 100 $B/a-bench $S --keys 2^26 --load-factors 0.8 > $R/oa-a-80.log 2>&1; el a-80 $?
WARPKV_COMMIT=5a49153 timeout 75 $B/a-bench $S --keys 2^26 --load-factors 0.5 > $R/oa-a-50.log 2>&1; el a-50 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 75 $B/new-bench $S --keys 2^26 --load-factors 0.5 > $R/oa-new-50.log 2>&1; el new-50 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 45 $B/new-bench $S --keys 2^25 --load-factors 0.8 > $R/oa-new-2p26.log 2>&1; el new-2p26 $?
WARPKV_COMMIT=5a49153 timeout 45 $B/a-bench $S --keys 2^25 --load-factors 0.8 > $R/oa-a-2p26.log 2>&1; el a-2p26 $?
PEERS="cuco" KEY_TILE=1 LFS=0.5,0.8 CAPS=27 EXTRA=26:0.8 REPEATS=3 WARMUP=1 CUCO_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 110 bash $B/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
left=$(( 570 - ($(date +%s)-t0) ))
WARPKV_TEST_BACKEND=cuda timeout $(( left > 100 ? 90 : left )) $B/tests/warpkv_open_addressing_tests > $R/oa-tests.log 2>&1; el tests $?
left=$(( 575 - ($(date +%s)-t0) ))
[ $left -gt 30 ] && { WARPKV_TEST_BACKEND=cuda WARPKV_TEST_SCALE=0.02 timeout $((left-5)) compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/warpkv_open_addressing_tests --gtest_filter='-*Linearizab*:*FailedAllocationLeavesTheMapAsItWas*' > $R/oa-memcheck.log 2>&1; el memcheck $?; tail -3 $R/oa-memcheck.log; }
tar czf $OUT/call-c.tgz -C $OUT r
tail -3 $R/oa-tests.log; grep "registers \]\|FAILED" $R/oa-tests.log
cut -c1-170 $R/call-c-ab-cuckoo-budget.jsonl
grep -h "G ops\|WARN\|rror" $R/oa-*.log | cut -c1-170
grep "insert\|find" $R/peers-cuco.log | cut -c1-100 | head -72
