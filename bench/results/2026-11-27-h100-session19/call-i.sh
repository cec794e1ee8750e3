#!/usr/bin/env bash
# call I (session 19): cuckoo tile 1 at C = 2^27, LF 0.95 / 0.9 / 0.8: NEW (the look-ahead in
# registers; cuckoo kernels of 5f6311d) against addf49c (session 18's measured final tree),
# alternated, BGHT beside; the cuckoo suite on the device, memcheck and racecheck reduced.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz $B/tests/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/old-bench $B/bin/* $B/tests/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-i-static-cuckoo.jsonl
S="static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map cuckoo --tile 1"
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.95 > $R/cuckoo-new-95.log 2>&1; el new-95 $?
WARPKV_COMMIT=addf49c timeout 80 $B/old-bench $S --load-factors 0.95 > $R/cuckoo-old-95.log 2>&1; el old-95 $?
WARPKV_COMMIT=addf49c timeout 80 $B/old-bench $S --load-factors 0.9 > $R/cuckoo-old-90.log 2>&1; el old-90 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.9 > $R/cuckoo-new-90.log 2>&1; el new-90 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.8 > $R/cuckoo-new-80.log 2>&1; el new-80 $?
WARPKV_COMMIT=addf49c timeout 80 $B/old-bench $S --load-factors 0.8 > $R/cuckoo-old-80.log 2>&1; el old-80 $?
PEERS="bght" KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 BGHT_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 110 bash $B/run-peers.sh $F > $R/peers-bght.log 2>&1; el bght $?
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_MODULES="cuckoo" WARPKV_GPU_SANITIZE_MODULES="cuckoo" WARPKV_GPU_SANITIZERS="memcheck racecheck" WARPKV_STEP_TIMEOUT_S=200 OUT=$R/check timeout $(( 585 - ($(date +%s)-t0) )) scripts/gpu-check > $R/check.txt 2>&1; el gpu-check $?
grep "registers \]\|PASSED\|FAILED\|== \|ERROR SUMMARY\|hazard" $R/check.txt | head -30
tar czf $OUT/call-i.tgz -C $OUT r
grep -h "G ops\|WARN\|rror" $R/cuckoo-*.log | cut -c1-170
grep "insert\|find" $R/peers-bght.log | grep -v "NOT VERIFIED" | cut -c1-90 | head -18
