#!/usr/bin/env bash
# call B (session 15): cache --hkv new (post score merge) vs a467efe beside HKV; ncu kernel durations of the cache rows
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/prev-bench $B/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
C=$OUT/call-b-cache-hkv.jsonl
WARPKV_COMMIT=$NEW_COMMIT timeout 60 $B/new-bench cache --backend cuda --hkv --no-ycsb --out $C > $OUT/cache-new.log 2>&1; echo "cache new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=a467efe timeout 60 $B/prev-bench cache --backend cuda --hkv --no-ycsb --out $C > $OUT/cache-prev.log 2>&1; echo "cache prev rc $? $(( $(date +%s)-t0 )) s"
PEERS=hkv CEILING=0 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$NEW_COMMIT timeout 70 bash $B/run-peers.sh $C > $OUT/hkv.log 2>&1; echo "hkv rc $? $(( $(date +%s)-t0 )) s"
grep -h "hkv " $OUT/cache-*.log | head -30
timeout 150 ncu --clock-control none --csv --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active $B/new-bench cache --backend cuda --hkv --no-ycsb --repeats 2 --warmup 0 > $OUT/ncu-cache.csv 2> $OUT/ncu-cache.err; echo "ncu rc $? $(( $(date +%s)-t0 )) s"
gzip -9 $OUT/ncu-cache.csv
tail -3 $OUT/hkv.log
