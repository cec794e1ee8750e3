#!/usr/bin/env bash
# call H (session 28): YCSB A, B, C, D, F (zipfian; D latest) through warpkv-bench of bb2b2cf at
# capacities 0.1 / 0.5 / 1.0 of 3x10^6 records, buckets of 8: issue 25's YCSB and hit-ratio targets.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/warpkv-bench
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-h-ycsb.jsonl
WARPKV_COMMIT=$(cat $B/commit) timeout 400 $B/warpkv-bench cache --backend cuda --workloads A,B,C,D,F --distributions zipfian --capacity 0.1,0.5,1 --bucket-widths 8 --out $F > $R/ycsb.log 2>&1; el ycsb $?
tail -30 $R/ycsb.log
