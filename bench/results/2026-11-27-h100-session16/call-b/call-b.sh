#!/usr/bin/env bash
# call B (session 16): cuckoo suite on the device (+ memcheck, racecheck on its reduced run), cuckoo T=8 new vs 3241fea,
# kernel times of cuckoo T=1 inserts at 0.95 (ncu), linear/quadratic T=1 insert-walk variants (throwaway A/B driver)
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/old-bench $B/ab-* $B/warpkv_cuckoo_tests
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
for r in 1 2; do for v in base g1 g1w w; do timeout 60 $B/ab-$v >> $OUT/ab.jsonl 2>&1; done; done; echo "ab rc $? $(( $(date +%s)-t0 )) s"
cat $OUT/ab.jsonl
for v in base g1 g1w w; do cuobjdump -res-usage $B/ab-$v 2>/dev/null | grep -A1 "tile_op_body.*insert_op" | grep -o "REG:[0-9]* STACK:[0-9]*" | tr '\n' ' ' | sed "s/^/$v insert kernels: /"; echo; done | tee $OUT/ab-res-usage.txt
F=$OUT/call-b-static-cuckoo-t8.jsonl
S="static --backend cuda --map cuckoo --keys 2^26 --repeats 3 --warmup 1 --load-factors 0.8,0.9 --tile 8 --out $F"
WARPKV_COMMIT=ae6a178 timeout 110 $B/new-bench $S > $OUT/cuckoo-t8-new.log 2>&1; echo "t8 new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=3241fea timeout 110 $B/old-bench $S > $OUT/cuckoo-t8-old.log 2>&1; echo "t8 old rc $? $(( $(date +%s)-t0 )) s"
grep -h "G ops" $OUT/cuckoo-t8-*.log | cut -c1-140
timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:cuckoo $B/new-bench static --backend cuda --map cuckoo --tile 1 --keys 2^24 --load-factors 0.95 --repeats 1 --warmup 0 > $OUT/ncu-cuckoo-t1-095.txt 2>&1; echo "ncu rc $? $(( $(date +%s)-t0 )) s"
left=$(( 585 - ($(date +%s)-t0) ))
WARPKV_TEST_BACKEND=cuda timeout $((left > 200 ? 150 : left/2)) $B/warpkv_cuckoo_tests > $OUT/cuckoo-tests.log 2>&1; echo "tests rc $? $(( $(date +%s)-t0 )) s"
tail -2 $OUT/cuckoo-tests.log; grep "registers\|FAILED" $OUT/cuckoo-tests.log
left=$(( 585 - ($(date +%s)-t0) ))
[ $left -gt 30 ] && { WARPKV_TEST_BACKEND=cuda WARPKV_TEST_SCALE=0.02 timeout $((left-10)) compute-sanitizer --tool memcheck --error-exitcode 9 $B/warpkv_cuckoo_tests --gtest_filter='-*Linearizab*' > $OUT/cuckoo-memcheck.log 2>&1; echo "memcheck rc $? $(( $(date +%s)-t0 )) s"; tail -3 $OUT/cuckoo-memcheck.log; }
