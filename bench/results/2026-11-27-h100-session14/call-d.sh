#!/usr/bin/env bash
# call D (session 14): H64 fast insert budget 48 (d32f824) vs 40 (88ccc80), T4/T1, beside cuco/BGHT; the H64 suite + sanitizers
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/b88ccc80-bench $B/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_MODULES="hopscotch_buckets" WARPKV_GPU_SANITIZERS="memcheck synccheck" OUT=$OUT/d timeout 150 scripts/gpu-check > $OUT/check-d.txt 2>&1; echo "gpu-check rc $? $(( $(date +%s)-t0 )) s"
grep "registers \]\|PASSED\|FAILED\|== " $OUT/check-d.txt | head -20
F=$OUT/call-d-static-h64.jsonl
S="static --backend cuda --map hopscotch-buckets --keys 2^26 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 110 $B/new-bench $S --tile 4,1 --load-factors 0.8,0.9 > $OUT/h64-new.log 2>&1; echo "new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=88ccc80 timeout 110 $B/b88ccc80-bench $S --tile 4,1 --load-factors 0.8,0.9 > $OUT/h64-88ccc80.log 2>&1; echo "88ccc80 rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=$NEW_COMMIT timeout 70 $B/new-bench $S --tile 1,4 --load-factors 0.95 > $OUT/h64-new-095.log 2>&1; echo "new 0.95 rc $? $(( $(date +%s)-t0 )) s"
PEERS="cuco bght" CEILING=0 LFS=0.8,0.9,0.95 CAPS=27 EXTRA=26:0.8 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$NEW_COMMIT timeout 90 bash $B/run-peers.sh $F > $OUT/peers.log 2>&1; echo "peers rc $? $(( $(date +%s)-t0 )) s"
cuobjdump -res-usage $B/new-bench 2>/dev/null | grep -A1 "hopscotch_bucket_ref" | grep -B1 "REG" | grep -o "Function [^:]*insert_op[^:]*\|REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*" > $OUT/res-usage-h64.txt
grep -h "G ops\|WARN" $OUT/h64-*.log | cut -c1-200
tar czf $OUT/d.tgz -C $OUT d && rm -rf $OUT/d
