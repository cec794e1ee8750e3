#!/usr/bin/env bash
# Session 8, device call A (898bfe3 binaries; kmeans and cache code unchanged since, up to comments):
# bank-conflicts microbenchmark + ncu counters + PNG, ncu of the fused fp32 assignment kernel per
# layout, padded vs natural layout timings (fused path) at 2^20 / 2^24; then cache bucket widths
# 4..32 and operation order mixed vs grouped x sync optimistic vs rw_lock (YCSB A, C, 10%).
set -u
D=$PWD/.carry/c4; O=${OUT:-/tmp/out}; mkdir -p "$O/all"
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} WARPKV_COMMIT=898bfe3
pack() { tar czf "$O/all.tgz" -C "$O" all; }
trap pack EXIT
nvidia-smi -L
WARPKV_BENCH_BIN=$D/warpkv-bench WARPKV_KMEANS_BUDGET_S=360 OUT=$O/all timeout 370 scripts/gpu-kmeans bank ncu bench >"$O/all/gpu-kmeans.txt" 2>&1
echo "gpu-kmeans rc=$? (${SECONDS}s)"; grep -E "gpu-kmeans" "$O/all/gpu-kmeans.txt" | tail -20
B=$D/warpkv-bench
timeout 100 "$B" cache --backend cuda --ops 2e6 --workloads A,C --distributions zipfian --capacity 0.1 \
  --bucket-widths 4,8,16,32 --out "$O/all/cache-widths.jsonl" >/dev/null 2>"$O/all/cache-widths.log"
echo "widths rc=$? (${SECONDS}s)"; grep "^ycsb" "$O/all/cache-widths.log"
timeout 100 "$B" cache --backend cuda --ops 2e6 --workloads A,C --distributions zipfian --capacity 0.1 \
  --bucket-widths 8 --op-order mixed,grouped --sync optimistic,rw_lock --out "$O/all/cache-modes.jsonl" >/dev/null 2>"$O/all/cache-modes.log"
echo "modes rc=$? (${SECONDS}s)"; grep "^ycsb" "$O/all/cache-modes.log"
