#!/usr/bin/env bash
# call E2: the H64 map (a467efe, E5) at LF 0.8-0.95 with the peers' bytes, beside cuco and BGHT
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F=$OUT/call-e2-static.jsonl
WARPKV_COMMIT=$NEW_COMMIT timeout 330 $B/new-bench static --backend cuda --map hopscotch-buckets --tile 4,1 --keys 2^26 --load-factors 0.8,0.9,0.95 --repeats 3 --warmup 1 --out $F > $OUT/h64.log 2>&1; echo "h64 rc $?"
PEERS="cuco bght" CEILING=0 LFS=0.8,0.9,0.95 CAPS=27 EXTRA=26:0.8 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$NEW_COMMIT timeout 200 bash $B/run-peers.sh $F > $OUT/peers.log 2>&1; echo "peers rc $?"
grep -h "G ops\|ok\]\|FAILED\|GREW" $OUT/h64.log | cut -c1-140 | tail -12; tail -4 $OUT/peers.log
