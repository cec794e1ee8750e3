#!/usr/bin/env bash
# call B2 (session 20): issue 23's "no map slower than at 9a3dac3": warpkv-bench static with
# 9a3dac3's binary and NEW (2c51e37), the same command, one after the other, C = 2^24.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/*-bench 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-b2-static-9a3dac3-vs-$NEW_COMMIT.jsonl
S="static --backend cuda --keys 2^23 --load-factors 0.5,0.8,0.95 --repeats 3 --warmup 1 --map hopscotch,cuckoo,chained-pool,chained-device --out $F"
WARPKV_COMMIT=9a3dac3 timeout 200 $B/old9a-bench $S > $R/static-9a3dac3.log 2>&1; el old $?
WARPKV_COMMIT=$NEW_COMMIT timeout 200 $B/new-bench $S > $R/static-new.log 2>&1; el new $?
tar czf $OUT/call-b2.tgz -C $OUT r
grep -h "G ops\|WARN\|rror" $R/static-9a3dac3.log $R/static-new.log | cut -c1-190
