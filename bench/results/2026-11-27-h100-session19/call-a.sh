#!/usr/bin/env bash
# call A (session 19): open addressing with 4 slots per lane at tile 1 (NEW: 32-byte windows read
# 16 bytes at a time; the default for packed pairs at T = 1) against addf49c (OLD: one slot per lane,
# the same open-addressing kernels as 8a3ed57), alternated, cuco beside; the throwaway ab driver
# (L = 1 / 2 / 4 in one binary); the open-addressing suite on the device.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz $B/tests/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/old-bench $B/ab $B/bin/* $B/tests/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
timeout 90 $B/ab > $OUT/call-a-ab.jsonl 2> $OUT/ab.err; el ab $?
F=$OUT/call-a-static-oa.jsonl
S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 75 $B/new-bench $S --keys 2^26 --load-factors 0.8 > $OUT/oa-new-80.log 2>&1; el new-80 $?
WARPKV_COMMIT=addf49c timeout 75 $B/old-bench $S --keys 2^26 --load-factors 0.8 > $OUT/oa-old-80.log 2>&1; el old-80 $?
WARPKV_COMMIT=addf49c timeout 75 $B/old-bench $S --keys 2^26 --load-factors 0.5 > $OUT/oa-old-50.log 2>&1; el old-50 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 75 $B/new-bench $S --keys 2^26 --load-factors 0.5 > $OUT/oa-new-50.log 2>&1; el new-50 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 45 $B/new-bench $S --keys 2^25 --load-factors 0.8 > $OUT/oa-new-2p26.log 2>&1; el new-2p26 $?
WARPKV_COMMIT=addf49c timeout 45 $B/old-bench $S --keys 2^25 --load-factors 0.8 > $OUT/oa-old-2p26.log 2>&1; el old-2p26 $?
PEERS="cuco" KEY_TILE=1 LFS=0.5,0.8 CAPS=27 EXTRA=26:0.8 REPEATS=3 WARMUP=1 CUCO_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 120 bash $B/run-peers.sh $F > $OUT/peers-cuco.log 2>&1; el cuco $?
left=$(( 575 - ($(date +%s)-t0) ))
WARPKV_TEST_BACKEND=cuda timeout $(( left > 150 ? 140 : left )) $B/tests/warpkv_open_addressing_tests > $OUT/oa-tests.log 2>&1; el tests $?
tail -3 $OUT/oa-tests.log; grep "registers \]\|FAILED" $OUT/oa-tests.log
cat $OUT/call-a-ab.jsonl
grep -h "G ops\|WARN\|rror" $OUT/oa-*.log | cut -c1-170
grep "insert\|find" $OUT/peers-cuco.log | grep -v "NOT VERIFIED" | cut -c1-100 | head -30
