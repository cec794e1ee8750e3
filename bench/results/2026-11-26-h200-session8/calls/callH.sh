#!/usr/bin/env bash
# Session 8, device call H (commit 7ee1860): eviction policies lru / random / clock on YCSB A, C, D
# at 10% and 50% capacity (W = 8), hit ratio next to exact LRU.
set -u
D=$PWD/.carry/c10; O=${OUT:-/tmp/out}; mkdir -p "$O/all"
export LD_LIBRARY_PATH=$D/lib WARPKV_COMMIT=7ee1860
timeout 280 $D/warpkv-bench cache --backend cuda --ops 2e6 --workloads A,C,D --distributions zipfian --capacity 0.1,0.5 \
  --bucket-widths 8 --policies lru,random,clock --repeats 3 --warmup 1 --out "$O/all/ycsb-policies.jsonl" >/dev/null 2>"$O/all/ycsb-policies.log"
echo "policies rc=$? (${SECONDS}s)"; grep "^ycsb" "$O/all/ycsb-policies.log"
