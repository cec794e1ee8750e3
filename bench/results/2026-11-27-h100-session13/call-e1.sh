#!/usr/bin/env bash
# call E1: the phased mixed batch at a467efe (one wait) vs 2f49d33 on the slot layout; the H64
# layout's mixed batches; SlabHash's mixed batches (our driver), one call
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F=$OUT/call-e1-dynamic.jsonl
ARGS="dynamic --backend cuda --tile 4 --ops 1e5,1e7 --key-range 100,1000,10000,100000,10000000 --repeats 3 --warmup 1"
WARPKV_COMMIT=$NEW_COMMIT timeout 150 $B/new-bench $ARGS --map hopscotch-buckets --out $F > $OUT/h64.log 2>&1; echo "h64 rc $?"
WARPKV_COMMIT=$NEW_COMMIT timeout 120 $B/new-bench $ARGS --map hopscotch --out $F > $OUT/new.log 2>&1; echo "new rc $?"
WARPKV_COMMIT=2f49d33 timeout 120 $B/b2f49d33-bench $ARGS --map hopscotch --out $F > $OUT/prev.log 2>&1; echo "prev rc $?"
WARPKV_COMMIT=$NEW_COMMIT timeout 100 $B/slabhash_mix_driver --ops 1e5,1e7 --key-range 100,1000,10000,100000,10000000 --mix 20,20,60 --mix 40,40,20 --repeats 3 --warmup 1 --out $F > $OUT/slabhash.log 2>&1; echo "slabhash rc $?"
grep -h "G ops/s" $OUT/h64.log $OUT/new.log $OUT/prev.log | cut -c1-110
