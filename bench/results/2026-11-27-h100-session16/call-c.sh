#!/usr/bin/env bash
# call C (session 16): open addressing tile 1 weak fast inserts (a21ac2b) vs ae6a178 beside cuco; the walk's group (throwaway driver)
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/old-bench $B/ab-* $B/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
for r in 1 2; do for v in base-ae6a178 g1w g2w w4; do timeout 60 $B/ab-$v >> $OUT/ab.jsonl 2>&1; done; done; echo "ab rc $? $(( $(date +%s)-t0 )) s"
F=$OUT/call-c-static-oa.jsonl
S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=a21ac2b timeout 110 $B/new-bench $S --keys 2^26 --load-factors 0.5,0.8 > $OUT/oa-new.log 2>&1; echo "new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=ae6a178 timeout 110 $B/old-bench $S --keys 2^26 --load-factors 0.5,0.8 > $OUT/oa-old.log 2>&1; echo "old rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=a21ac2b timeout 45 $B/new-bench $S --keys 2^25 --load-factors 0.8 > $OUT/oa-new-2p26.log 2>&1; echo "new 2^26 rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=ae6a178 timeout 45 $B/old-bench $S --keys 2^25 --load-factors 0.8 > $OUT/oa-old-2p26.log 2>&1; echo "old 2^26 rc $? $(( $(date +%s)-t0 )) s"
grep -h "G ops\|WARN\|rror" $OUT/oa-*.log | cut -c1-190
left=$(( 585 - ($(date +%s)-t0) ))
PEERS="cuco" CEILING=0 LFS=0.5,0.8 CAPS=27 EXTRA=26:0.8 REPEATS=3 WARMUP=1 WARPKV_COMMIT=a21ac2b timeout $((left-5)) bash $B/run-peers.sh $F > $OUT/peers.log 2>&1; echo "peers rc $? $(( $(date +%s)-t0 )) s"
grep "cg[0-9].*insert" $OUT/peers.log | head -20
cat $OUT/ab.jsonl | cut -c1-150
