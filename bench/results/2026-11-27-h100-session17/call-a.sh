#!/usr/bin/env bash
# call A (session 17): the listed second pass (35858bb) against a7cae7d: cuckoo tile 1 (and 8 at
# LF 0.9) and H64 tile 1 inserts at LF 0.8 / 0.9 / 0.95, C = 2^27, beside BGHT; quadratic at
# 2^27 LF 0.8 beside cuco's double hashing; cuckoo mixed batches at tiles 1 and 8.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/old-bench $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
F=$OUT/call-a-static.jsonl
S="static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 90 $B/new-bench $S --map cuckoo --tile 1 --load-factors 0.8,0.9,0.95 > $OUT/cuckoo-new.log 2>&1; el cuckoo-new $?
WARPKV_COMMIT=a7cae7d timeout 110 $B/old-bench $S --map cuckoo --tile 1 --load-factors 0.8,0.9,0.95 > $OUT/cuckoo-old.log 2>&1; el cuckoo-old $?
PEERS="bght" KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 BGHT_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 100 bash $B/run-peers.sh $F > $OUT/peers-bght.log 2>&1; el bght $?
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --map hopscotch-buckets --tile 1 --load-factors 0.8,0.9,0.95 > $OUT/h64-new.log 2>&1; el h64-new $?
WARPKV_COMMIT=a7cae7d timeout 90 $B/old-bench $S --map hopscotch-buckets --tile 1 --load-factors 0.8,0.9,0.95 > $OUT/h64-old.log 2>&1; el h64-old $?
WARPKV_COMMIT=$NEW_COMMIT timeout 40 $B/new-bench $S --map cuckoo --tile 8 --load-factors 0.9 > $OUT/cuckoo8-new.log 2>&1; el cuckoo8-new $?
WARPKV_COMMIT=a7cae7d timeout 40 $B/old-bench $S --map cuckoo --tile 8 --load-factors 0.9 > $OUT/cuckoo8-old.log 2>&1; el cuckoo8-old $?
left=$(( 560 - ($(date +%s)-t0) ))
if [ $left -gt 90 ]; then
  WARPKV_COMMIT=$NEW_COMMIT timeout 45 $B/new-bench $S --map quadratic --tile 1 --load-factors 0.8 > $OUT/quad-new.log 2>&1; el quad-new $?
  PEERS="cuco" KEY_TILE=1 LFS=0.8 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 CUCO_VARIANTS=dh_cg1,dh_cg2,dh_cg4 CUCO_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 60 bash $B/run-peers.sh $F > $OUT/peers-cuco.log 2>&1; el cuco $?
fi
left=$(( 570 - ($(date +%s)-t0) ))
if [ $left -gt 40 ]; then
  WARPKV_COMMIT=$NEW_COMMIT timeout $((left-5)) $B/new-bench dynamic --backend cuda --map cuckoo --tile 1,8 --ops 1e5,1e7 --key-range 100,10000,10000000 --repeats 3 --warmup 1 --out $OUT/call-a-dynamic.jsonl > $OUT/dynamic-new.log 2>&1; el dynamic $?
fi
grep -h "G ops\|WARN\|rror" $OUT/*-new.log $OUT/*-old.log | cut -c1-160
tail -3 $OUT/peers-*.log
