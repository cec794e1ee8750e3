#!/usr/bin/env bash
# Session 8, device call E (working tree: reads-first batches, combining, digests): cache suite +
# sanitizers; registers of the cache kernels; ncu of both phases (YCSB C, 10%, W = 8); YCSB A and
# C at capacity 0.1 / 0.5 / 1.0; HierarchicalKV setting.
set -u
D=$PWD/.carry/c8; O=${OUT:-/tmp/out}; mkdir -p "$O/all"
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} WARPKV_COMMIT=${WARPKV_COMMIT:-s8-callE}
pack() { tar czf "$O/all.tgz" -C "$O" all; }
trap pack EXIT
B=$D/warpkv-bench
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null)
"$CUOBJ" --dump-resource-usage "$B" 2>/dev/null | grep -A1 -E "cache_read_op|cache_batch_op" >"$O/all/regs.txt"
echo "cuobjdump rc=$?"; grep -o "REG:[0-9]* STACK:[0-9]*" "$O/all/regs.txt" | sort | uniq -c | head
ARGS="cache --backend cuda --ops 2e6 --workloads C --distributions zipfian --capacity 0.1 --bucket-widths 8 --repeats 1 --warmup 0"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for k in "cache_read_op 0" "cache_batch_op 3"; do set -- $k
  timeout 90 "$NCU" --clock-control none --kernel-name-base demangled --kernel-name regex:$1 --launch-skip $2 --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
    --log-file "$O/all/ncu-$1.txt" $B $ARGS >/dev/null 2>&1
  echo "ncu $1 rc=$? (${SECONDS}s)"; grep -E "  Duration|Registers Per|Achieved Occupancy|Avg. Active Threads|Warp Cycles Per Issued" "$O/all/ncu-$1.txt"
done
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$D WARPKV_GPU_PARALLEL=1 WARPKV_GPU_MODULES="cache" \
  OUT=$O/all/check timeout 200 scripts/gpu-check >"$O/all/check.txt" 2>&1
echo "gpu-check cache rc=$? (${SECONDS}s)"; grep -E "==|gpu-check|FAILED" "$O/all/check.txt" | head -30
timeout 150 $B cache --backend cuda --ops 2e6 --workloads A,C --distributions zipfian --capacity 0.1,0.5,1.0 --bucket-widths 8 \
  --repeats 3 --warmup 1 --out "$O/all/ycsb-cap.jsonl" >/dev/null 2>"$O/all/ycsb-cap.log"
echo "cap rc=$? (${SECONDS}s)"; grep "^ycsb" "$O/all/ycsb-cap.log"
timeout 150 $B cache --backend cuda --hkv --no-ycsb --out "$O/all/hkv.jsonl" >/dev/null 2>"$O/all/hkv.log"
echo "hkv rc=$? (${SECONDS}s)"; grep "^hkv" "$O/all/hkv.log"
