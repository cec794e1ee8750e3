#!/usr/bin/env bash
# Session 8, device call B (working tree on 898bfe3 + n_init + YCSB passes): kmeans suite (new
# RecoversSeparatedBlobsFromEveryInit, NInitKeepsTheLowestInertiaRun) + memcheck/racecheck/synccheck;
# cache YCSB A and C at 10%: bucket widths 4..32; op order mixed vs grouped x sync; each row the
# median of 3 passes after 1 warm-up pass.
set -u
D=$PWD/.carry/c6; O=${OUT:-/tmp/out}; mkdir -p "$O/all"
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} WARPKV_COMMIT=${WARPKV_COMMIT:-s8-callB}
pack() { tar czf "$O/all.tgz" -C "$O" all; }
trap pack EXIT
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$D WARPKV_GPU_PARALLEL=1 WARPKV_GPU_MODULES="kmeans" \
  OUT=$O/all/check timeout 200 scripts/gpu-check >"$O/all/check.txt" 2>&1
echo "gpu-check kmeans rc=$? (${SECONDS}s)"; grep -E "==|gpu-check|FAILED|PASSED" "$O/all/check.txt" | head -30
B=$D/warpkv-bench
timeout 170 "$B" cache --backend cuda --ops 2e6 --workloads A,C --distributions zipfian --capacity 0.1 \
  --bucket-widths 4,8,16,32 --repeats 3 --warmup 1 --out "$O/all/cache-widths.jsonl" >/dev/null 2>"$O/all/cache-widths.log"
echo "widths rc=$? (${SECONDS}s)"; grep "^ycsb" "$O/all/cache-widths.log"
timeout 170 "$B" cache --backend cuda --ops 2e6 --workloads A,C --distributions zipfian --capacity 0.1 \
  --bucket-widths 8 --op-order mixed,grouped --sync optimistic,rw_lock --repeats 3 --warmup 1 --out "$O/all/cache-modes.jsonl" >/dev/null 2>"$O/all/cache-modes.log"
echo "modes rc=$? (${SECONDS}s)"; grep "^ycsb" "$O/all/cache-modes.log"
