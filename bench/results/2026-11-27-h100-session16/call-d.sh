#!/usr/bin/env bash
# call D (session 16): open addressing tile 1 fast inserts with groups of 2 (new) vs ae6a178 beside cuco; the open-addressing
# suite on the device (the weak-read fast inserts' first GPU run) + memcheck; cuckoo tile 8 new vs 3241fea if time is left
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/old-bench $B/bin/* $B/warpkv_open_addressing_tests $B/cuckoo-old-bench 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
F=$OUT/call-d-static-oa.jsonl
S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 110 $B/new-bench $S --keys 2^26 --load-factors 0.5,0.8 > $OUT/oa-new.log 2>&1; echo "new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=ae6a178 timeout 110 $B/old-bench $S --keys 2^26 --load-factors 0.5,0.8 > $OUT/oa-old.log 2>&1; echo "old rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=$NEW_COMMIT timeout 45 $B/new-bench $S --keys 2^25 --load-factors 0.8 > $OUT/oa-new-2p26.log 2>&1; echo "new 2^26 rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=ae6a178 timeout 45 $B/old-bench $S --keys 2^25 --load-factors 0.8 > $OUT/oa-old-2p26.log 2>&1; echo "old 2^26 rc $? $(( $(date +%s)-t0 )) s"
grep -h "G ops\|WARN\|rror" $OUT/oa-*.log | cut -c1-150
PEERS="cuco" CEILING=0 LFS=0.5,0.8 CAPS=27 EXTRA=26:0.8 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$NEW_COMMIT timeout 80 bash $B/run-peers.sh $F > $OUT/peers.log 2>&1; echo "peers rc $? $(( $(date +%s)-t0 )) s"
left=$(( 560 - ($(date +%s)-t0) ))
WARPKV_TEST_BACKEND=cuda timeout $(( left > 150 ? 120 : left/2 )) $B/warpkv_open_addressing_tests > $OUT/oa-tests.log 2>&1; echo "tests rc $? $(( $(date +%s)-t0 )) s"
tail -2 $OUT/oa-tests.log; grep "registers\|FAILED" $OUT/oa-tests.log
left=$(( 560 - ($(date +%s)-t0) ))
[ $left -gt 30 ] && { WARPKV_TEST_BACKEND=cuda WARPKV_TEST_SCALE=0.02 timeout $((left-5)) compute-sanitizer --tool memcheck --error-exitcode 9 $B/warpkv_open_addressing_tests --gtest_filter='-*Linearizab*:*FailedAllocationLeavesTheMapAsItWas*' > $OUT/oa-memcheck.log 2>&1; echo "memcheck rc $? $(( $(date +%s)-t0 )) s"; tail -3 $OUT/oa-memcheck.log; }
