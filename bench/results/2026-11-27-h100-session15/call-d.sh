#!/usr/bin/env bash
# call D (session 15): status counts summed per block with no barrier (new) vs e694995 (a warp's atomics): H64 T=1 and
# linear/quadratic T=1, beside cuco; registers of the new kernels
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/tpo-bench $B/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
F=$OUT/call-d-static.jsonl
S="static --backend cuda --keys 2^26 --tile 1 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 130 $B/new-bench $S --map hopscotch-buckets --load-factors 0.8,0.9,0.95 > $OUT/h64-new.log 2>&1; echo "h64 new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=e694995 timeout 130 $B/tpo-bench $S --map hopscotch-buckets --load-factors 0.8,0.9,0.95 > $OUT/h64-tpo.log 2>&1; echo "h64 tpo rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=$NEW_COMMIT timeout 100 $B/new-bench $S --map linear,quadratic --load-factors 0.5,0.8 > $OUT/oa-new.log 2>&1; echo "oa new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=e694995 timeout 100 $B/tpo-bench $S --map linear,quadratic --load-factors 0.5,0.8 > $OUT/oa-tpo.log 2>&1; echo "oa tpo rc $? $(( $(date +%s)-t0 )) s"
grep -h "G ops\|WARN" $OUT/h64-*.log $OUT/oa-*.log | cut -c1-170
left=$(( 575 - ($(date +%s)-t0) ))
[ $left -gt 40 ] && { PEERS="cuco" CEILING=0 LFS=0.5,0.8,0.9,0.95 CAPS=27 EXTRA=26:0.8 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$NEW_COMMIT timeout $((left-5)) bash $B/run-peers.sh $F > $OUT/peers.log 2>&1; echo "peers rc $? $(( $(date +%s)-t0 )) s"; tail -1 $OUT/peers.log; }
cuobjdump -res-usage $B/new-bench 2>/dev/null | grep -A1 "tile_op_body" | grep -B1 "REG" | grep -o "Function [^:]*kernelILi1E[^:]*\(hopscotch_bucket_ref\|open_addressing_ref\)[^:]*\|REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*" > $OUT/res-usage-t1.txt
