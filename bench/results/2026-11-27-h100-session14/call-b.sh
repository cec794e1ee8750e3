#!/usr/bin/env bash
# call B (session 14): H64 inserts: this tree (one fence) T4/T1, the second-launch variant, 8184dcd; cuco/BGHT
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/variant-bench $B/b8184dcd-bench $B/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F=$OUT/call-b-static-h64.jsonl
t0=$(date +%s)
S="static --backend cuda --map hopscotch-buckets --keys 2^26 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 120 $B/new-bench $S --tile 4 --load-factors 0.8,0.9,0.95 > $OUT/h64-new.log 2>&1; echo "new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=$NEW_COMMIT-second-launch timeout 120 $B/variant-bench $S --tile 4 --load-factors 0.8,0.9,0.95 > $OUT/h64-variant.log 2>&1; echo "variant rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=8184dcd timeout 110 $B/b8184dcd-bench $S --tile 4 --load-factors 0.8,0.9 > $OUT/h64-8184dcd.log 2>&1; echo "8184dcd rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --tile 1 --load-factors 0.8,0.9 > $OUT/h64-new-t1.log 2>&1; echo "new t1 rc $? $(( $(date +%s)-t0 )) s"
PEERS="cuco bght" CEILING=0 LFS=0.8,0.9,0.95 CAPS=27 EXTRA=26:0.8 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$NEW_COMMIT timeout 100 bash $B/run-peers.sh $F > $OUT/peers.log 2>&1; echo "peers rc $? $(( $(date +%s)-t0 )) s"
cuobjdump -res-usage $B/new-bench 2>/dev/null | grep -A1 "hopscotch_bucket_ref" | grep -B1 "REG" | grep -o "Function [^:]*insert_op[^:]*\|REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*" > $OUT/res-usage-h64.txt
grep -h "G ops\|WARN" $OUT/h64-*.log | cut -c1-200; tail -n 3 $OUT/peers.log
