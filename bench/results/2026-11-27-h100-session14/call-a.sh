#!/usr/bin/env bash
# call A (session 14): H64 inserts new vs a467efe beside cuco/BGHT; cache --hkv new vs a467efe beside HKV; ncu of the new insert kernels
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/prev-bench $B/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F=$OUT/call-a-static-h64.jsonl
t0=$(date +%s)
WARPKV_COMMIT=$NEW_COMMIT timeout 170 $B/new-bench static --backend cuda --map hopscotch-buckets --tile 4 --keys 2^26 --load-factors 0.8,0.9,0.95 --repeats 3 --warmup 1 --out $F > $OUT/h64-new.log 2>&1; echo "h64 new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=a467efe timeout 170 $B/prev-bench static --backend cuda --map hopscotch-buckets --tile 4 --keys 2^26 --load-factors 0.8,0.9,0.95 --repeats 3 --warmup 1 --out $F > $OUT/h64-prev.log 2>&1; echo "h64 prev rc $? $(( $(date +%s)-t0 )) s"
PEERS="cuco bght" CEILING=0 LFS=0.8,0.9,0.95 CAPS=27 EXTRA=26:0.8 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$NEW_COMMIT timeout 150 bash $B/run-peers.sh $F > $OUT/peers.log 2>&1; echo "peers rc $? $(( $(date +%s)-t0 )) s"
C=$OUT/call-a-cache-hkv.jsonl
WARPKV_COMMIT=$NEW_COMMIT timeout 40 $B/new-bench cache --backend cuda --hkv --no-ycsb --out $C > $OUT/cache-new.log 2>&1; echo "cache new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=a467efe timeout 40 $B/prev-bench cache --backend cuda --hkv --no-ycsb --out $C > $OUT/cache-prev.log 2>&1; echo "cache prev rc $? $(( $(date +%s)-t0 )) s"
PEERS=hkv CEILING=0 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$NEW_COMMIT timeout 60 bash $B/run-peers.sh $C > $OUT/hkv.log 2>&1; echo "hkv rc $? $(( $(date +%s)-t0 )) s"
left=$(( 560 - ($(date +%s)-t0) ))
if [ $left -gt 40 ]; then
  timeout $((left-10)) ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex.sum,dram__bytes_read.sum $B/new-bench static --backend cuda --map hopscotch-buckets --tile 4 --keys 2^24 --load-factors 0.8 --repeats 1 --warmup 0 > $OUT/ncu-new.txt 2>&1; echo "ncu rc $? $(( $(date +%s)-t0 )) s"
fi
grep -h "G ops\|WARN" $OUT/h64-*.log | cut -c1-200; grep -h "G ops" $OUT/cache-*.log | head -30; tail -3 $OUT/peers.log $OUT/hkv.log
