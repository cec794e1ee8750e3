#!/usr/bin/env bash
# call A (session 18): cuckoo tile 1 inserts with insert_evicting (NEW) against 1f5679e (OLD) at
# LF 0.8 / 0.9 / 0.95, C = 2^27, alternated, BGHT beside; then ncu of NEW's insert kernels at 0.95.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/old-bench $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
F=$OUT/call-a-static.jsonl
S="static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map cuckoo --tile 1"
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.95 > $OUT/cuckoo-new-95.log 2>&1; el new-95 $?
WARPKV_COMMIT=1f5679e timeout 80 $B/old-bench $S --load-factors 0.95 > $OUT/cuckoo-old-95.log 2>&1; el old-95 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.9 > $OUT/cuckoo-new-90.log 2>&1; el new-90 $?
WARPKV_COMMIT=1f5679e timeout 80 $B/old-bench $S --load-factors 0.9 > $OUT/cuckoo-old-90.log 2>&1; el old-90 $?
WARPKV_COMMIT=1f5679e timeout 80 $B/old-bench $S --load-factors 0.8 > $OUT/cuckoo-old-80.log 2>&1; el old-80 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.8 > $OUT/cuckoo-new-80.log 2>&1; el new-80 $?
PEERS="bght" KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 BGHT_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 110 bash $B/run-peers.sh $F > $OUT/peers-bght.log 2>&1; el bght $?
left=$(( 590 - ($(date +%s)-t0) ))
[ $left -gt 30 ] && timeout $left ncu --metrics gpu__time_duration.sum --kernel-name-base demangled --kernel-name regex:"insert_op|sort_into_lists" --launch-count 6 --csv \
  $B/new-bench static --backend cuda --keys 2^26 --repeats 1 --warmup 1 --map cuckoo --tile 1 --load-factors 0.95 > $OUT/ncu-cuckoo-0.95.csv 2> $OUT/ncu-cuckoo-0.95.err; el ncu $?
grep -v '^{' $OUT/ncu-cuckoo-0.95.csv 2>/dev/null | grep -o '"[^"]*tile_op_body<1, [a-z_]*<[a-z_]*op<[^,]*\|"[^"]*sort_into_lists[^"]*"\|"gpu__time_duration.sum","[a-z]*","[0-9.,]*"' | paste - - | cut -c1-200
grep -h "G ops\|WARN\|rror" $OUT/*.log | cut -c1-170
grep "insert\|find" $OUT/peers-bght.log | grep -v "NOT VERIFIED" | cut -c1-90
