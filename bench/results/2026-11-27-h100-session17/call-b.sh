#!/usr/bin/env bash
# call B (session 17): the eviction look-ahead (NEW) against the listed second pass alone (35858bb)
# and a7cae7d, cuckoo tile 1 inserts at LF 0.9 / 0.95 (and NEW at 0.8), H64 tile 1 at 0.95
# (35858bb vs a7cae7d), C = 2^27, BGHT beside.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/b1-bench $B/old-bench $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
F=$OUT/call-b-static.jsonl
S="static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map cuckoo --tile 1"
WARPKV_COMMIT=$NEW_COMMIT timeout 90 $B/new-bench $S --load-factors 0.9,0.95 > $OUT/cuckoo-new.log 2>&1; el cuckoo-new $?
WARPKV_COMMIT=35858bb timeout 90 $B/b1-bench $S --load-factors 0.9,0.95 > $OUT/cuckoo-b1.log 2>&1; el cuckoo-b1 $?
WARPKV_COMMIT=a7cae7d timeout 60 $B/old-bench $S --load-factors 0.95 > $OUT/cuckoo-old.log 2>&1; el cuckoo-old $?
PEERS="bght" KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 BGHT_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 100 bash $B/run-peers.sh $F > $OUT/peers-bght.log 2>&1; el bght $?
WARPKV_COMMIT=$NEW_COMMIT timeout 50 $B/new-bench $S --load-factors 0.8 > $OUT/cuckoo-new-08.log 2>&1; el cuckoo-new-08 $?
H="static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map hopscotch-buckets --tile 1 --load-factors 0.95"
WARPKV_COMMIT=35858bb timeout 60 $B/b1-bench $H > $OUT/h64-b1.log 2>&1; el h64-b1 $?
WARPKV_COMMIT=a7cae7d timeout 60 $B/old-bench $H > $OUT/h64-old.log 2>&1; el h64-old $?
grep -h "G ops\|WARN\|rror" $OUT/*.log | cut -c1-170
