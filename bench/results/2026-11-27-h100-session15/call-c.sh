#!/usr/bin/env bash
# call C (session 15): block-summed status counts (new) vs e694995 (tpo): H64 T=1 and linear/quadratic T=1, beside cuco/BGHT;
# cache --hkv a467efe first, then new (the order check of call B); ncu source counters of the cache write fast pass at load 0.5
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/tpo-bench $B/a467-bench $B/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
C=$OUT/call-c-cache-hkv.jsonl
WARPKV_COMMIT=a467efe timeout 40 $B/a467-bench cache --backend cuda --hkv --no-ycsb --out $C > $OUT/cache-a467efe.log 2>&1; echo "cache a467efe rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=$NEW_COMMIT timeout 40 $B/new-bench cache --backend cuda --hkv --no-ycsb --out $C > $OUT/cache-new.log 2>&1; echo "cache new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=a467efe timeout 40 $B/a467-bench cache --backend cuda --hkv --no-ycsb --out $C > $OUT/cache-a467efe-2.log 2>&1; echo "cache a467efe again rc $? $(( $(date +%s)-t0 )) s"
grep -h "hkv find" $OUT/cache-*.log
F=$OUT/call-c-static.jsonl
S="static --backend cuda --keys 2^26 --tile 1 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 90 $B/new-bench $S --map hopscotch-buckets --load-factors 0.8,0.9,0.95 > $OUT/h64-new.log 2>&1; echo "h64 new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=e694995 timeout 90 $B/tpo-bench $S --map hopscotch-buckets --load-factors 0.8,0.9,0.95 > $OUT/h64-tpo.log 2>&1; echo "h64 tpo rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=$NEW_COMMIT timeout 60 $B/new-bench $S --map linear,quadratic --load-factors 0.5,0.8 > $OUT/oa-new.log 2>&1; echo "oa new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=e694995 timeout 60 $B/tpo-bench $S --map linear,quadratic --load-factors 0.5,0.8 > $OUT/oa-tpo.log 2>&1; echo "oa tpo rc $? $(( $(date +%s)-t0 )) s"
grep -h "G ops\|WARN" $OUT/h64-*.log $OUT/oa-*.log | cut -c1-200
left=$(( 560 - ($(date +%s)-t0) ))
[ $left -gt 70 ] && { PEERS="cuco bght" CEILING=0 LFS=0.5,0.8,0.9,0.95 CAPS=27 EXTRA=26:0.8 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$NEW_COMMIT timeout $((left-40)) bash $B/run-peers.sh $F > $OUT/peers.log 2>&1; echo "peers rc $? $(( $(date +%s)-t0 )) s"; tail -2 $OUT/peers.log; }
left=$(( 570 - ($(date +%s)-t0) ))
if [ $left -gt 25 ]; then
  K='regex:cache_write_opINS_9cache_refImLi8ELi8ENS_12cache_designINS0_16optimistic_slotsENS0_12lru_evictionENS0_10value_slabENS0_10plain_keysEEEEELNS_10cache_passE0E'
  timeout $((left-5)) ncu --clock-control none --kernel-name-base mangled -k "$K" --launch-skip 65 --launch-count 1 --set full --import-source no -o $OUT/cachew $B/new-bench cache --backend cuda --hkv --no-ycsb --repeats 1 --warmup 0 > $OUT/ncu-cachew.log 2>&1; echo "ncu cache rc $? $(( $(date +%s)-t0 )) s"
  ncu -i $OUT/cachew.ncu-rep --page details --csv > $OUT/cachew-details.csv 2>&1
  ncu -i $OUT/cachew.ncu-rep --page source --csv --print-source sass > $OUT/cachew-sass.csv 2>&1; gzip -9 $OUT/cachew-sass.csv; rm -f $OUT/cachew.ncu-rep
fi
