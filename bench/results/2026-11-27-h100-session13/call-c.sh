#!/usr/bin/env bash
# call C: mixed batches in phases (new) vs 8bf7bab (prev), beside SlabHash's mixed batches
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ARGS="dynamic --backend cuda --map hopscotch,cuckoo --tile 4 --ops 1e5,1e7 --key-range 100,1000,10000,100000,10000000 --repeats 3 --warmup 1"
WARPKV_COMMIT=${NEW_COMMIT} timeout 220 $B/new-bench $ARGS --out $OUT/call-c-dynamic.jsonl > $OUT/new.log 2>&1; echo "new rc $?"
WARPKV_COMMIT=8bf7bab timeout 200 $B/prev-bench $ARGS --out $OUT/call-c-dynamic.jsonl > $OUT/prev.log 2>&1; echo "prev rc $?"
WARPKV_COMMIT=${NEW_COMMIT} timeout 140 $B/slabhash_mix_driver --ops 1e5,1e7 --key-range 100,1000,10000,100000,10000000 --mix 20,20,60 --mix 40,40,20 --repeats 3 --warmup 1 --out $OUT/call-c-dynamic.jsonl > $OUT/slabhash.log 2>&1; echo "slabhash rc $?"
grep -h "G ops\|ok\]\|FAILED" $OUT/new.log $OUT/prev.log | tail -60
tail -5 $OUT/slabhash.log
