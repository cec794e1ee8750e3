#!/usr/bin/env bash
# call H (session 17): H64 (hopscotch_map, bucket layout) tile 1 at LF 0.8 / 0.9 / 0.95 with
# 363f965 (= the final tree's kernels), beside cuco and BGHT at the same load factors.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
F=$OUT/call-h-static.jsonl
WARPKV_COMMIT=363f965 timeout 170 $B/new-bench static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map hopscotch-buckets --tile 1 --load-factors 0.8,0.9,0.95 > $OUT/h64.log 2>&1; el h64 $?
PEERS="bght cuco" KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 BGHT_OPS=insert,find_hit,find_miss CUCO_OPS=insert,find_hit,find_miss WARPKV_COMMIT=363f965 timeout 300 bash $B/run-peers.sh $F > $OUT/peers.log 2>&1; el peers $?
grep -h "G ops\|WARN\|rror" $OUT/h64.log | cut -c1-170
grep "insert\|find" $OUT/peers.log | grep -v "NOT VERIFIED" | cut -c1-90
