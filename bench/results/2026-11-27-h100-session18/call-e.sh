#!/usr/bin/env bash
# call E (session 18): premixed hash seeds in cuckoo_ref (NEW) against f677df0 (B, = 8d964f8 kernels),
# cuckoo tile 1 inserts at LF 0.95 / 0.9 / 0.8, C = 2^27, alternated, BGHT beside; ncu time of
# NEW's complete insert at 0.95; the cuckoo suite on the device, memcheck and racecheck reduced.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz $B/tests/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/b-bench $B/bin/* $B/tests/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
F=$OUT/call-e-static.jsonl
S="static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map cuckoo --tile 1"
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.95 > $OUT/cuckoo-new-95.log 2>&1; el new-95 $?
WARPKV_COMMIT=f677df0 timeout 80 $B/b-bench $S --load-factors 0.95 > $OUT/cuckoo-b-95.log 2>&1; el b-95 $?
WARPKV_COMMIT=f677df0 timeout 80 $B/b-bench $S --load-factors 0.9 > $OUT/cuckoo-b-90.log 2>&1; el b-90 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.9 > $OUT/cuckoo-new-90.log 2>&1; el new-90 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.8 > $OUT/cuckoo-new-80.log 2>&1; el new-80 $?
WARPKV_COMMIT=f677df0 timeout 80 $B/b-bench $S --load-factors 0.8 > $OUT/cuckoo-b-80.log 2>&1; el b-80 $?
PEERS="bght" KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 BGHT_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 110 bash $B/run-peers.sh $F > $OUT/peers-bght.log 2>&1; el bght $?
timeout 60 ncu --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio --kernel-name-base demangled --kernel-name regex:"pass.1" --launch-count 2 --csv \
  $B/new-bench static --backend cuda --keys 2^26 --repeats 1 --warmup 1 --map cuckoo --tile 1 --load-factors 0.95 > $OUT/ncu-e.csv 2> $OUT/ncu-e.err; el ncu $?
grep '^"' $OUT/ncu-e.csv | awk -F'","' '{print $(NF-2), $NF}' | tail -6
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_MODULES="cuckoo" WARPKV_GPU_SANITIZE_MODULES="cuckoo" WARPKV_GPU_SANITIZERS="memcheck racecheck" WARPKV_STEP_TIMEOUT_S=200 OUT=$OUT/check timeout $(( 590 - ($(date +%s)-t0) )) scripts/gpu-check > $OUT/check.txt 2>&1; el gpu-check $?
grep "registers \]\|PASSED\|FAILED\|== \|ERROR SUMMARY\|hazard" $OUT/check.txt | head -30
tar czf $OUT/check.tgz -C $OUT check && rm -rf $OUT/check
grep -h "G ops\|WARN\|rror" $OUT/*.log | cut -c1-170
grep "insert\|find" $OUT/peers-bght.log | grep -v "NOT VERIFIED" | cut -c1-90 | head -18
