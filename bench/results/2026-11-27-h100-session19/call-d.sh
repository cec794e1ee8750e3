#!/usr/bin/env bash
# call D (session 19): warpkv-bench static with and without per-operation status arrays in the
# timed inserts and finds (--no-statuses: what cuco's insert_async / find_async write), open
# addressing tile 1 at C = 2^27 and 2^26, LF 0.5 / 0.8, cuco beside (NEW = the session's kernels).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-d-static-oa.jsonl
S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 110 $B/new-bench $S --keys 2^26 --load-factors 0.5,0.8 --no-statuses > $R/oa-nostat-2p27.log 2>&1; el nostat-2p27 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 110 $B/new-bench $S --keys 2^26 --load-factors 0.5,0.8 > $R/oa-stat-2p27.log 2>&1; el stat-2p27 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --keys 2^25 --load-factors 0.5,0.8 --no-statuses > $R/oa-nostat-2p26.log 2>&1; el nostat-2p26 $?
PEERS="cuco" KEY_TILE=1 LFS=0.5,0.8 CAPS=27 EXTRA=26:0.5,26:0.8 REPEATS=3 WARMUP=1 CUCO_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 130 bash $B/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
tar czf $OUT/call-d.tgz -C $OUT r
grep -h "G ops\|WARN\|rror" $R/oa-*.log | cut -c1-170
grep "insert\|find" $R/peers-cuco.log | cut -c1-100
