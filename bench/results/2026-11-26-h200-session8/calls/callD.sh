#!/usr/bin/env bash
# Session 8, device call D (call C's binaries): where YCSB C's batch time goes. nsys kernel/API
# summary of one pass (C, 10%, W = 8, combined); ncu of the two run-phase batch kernels; YCSB
# A and C at capacity 0.5 and 1.0.
set -u
D=$PWD/.carry/c7; O=${OUT:-/tmp/out}; mkdir -p "$O/all"
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} WARPKV_COMMIT=${WARPKV_COMMIT:-s8-callC}
pack() { tar czf "$O/all.tgz" -C "$O" all; }
trap pack EXIT
B=$D/warpkv-bench
ARGS="cache --backend cuda --ops 2e6 --workloads C --distributions zipfian --capacity 0.1 --bucket-widths 8 --repeats 1 --warmup 0"
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [[ -n "$NSYS" ]]; then
  cd "$O/all" && timeout 120 "$NSYS" profile -o ycsbC --force-overwrite true --stats=false $B $ARGS >/dev/null 2>nsys.err
  echo "nsys rc=$? (${SECONDS}s)"
  timeout 60 "$NSYS" stats --report cuda_gpu_kern_sum,cuda_api_sum --format csv --output ycsbC ycsbC.nsys-rep >/dev/null 2>>nsys.err
  rm -f ycsbC.nsys-rep ycsbC.sqlite; ls; head -c 3000 ycsbC_cuda_gpu_kern_sum.csv; echo; head -c 1500 ycsbC_cuda_api_sum.csv; cd - >/dev/null
else
  echo "no nsys"
fi
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
timeout 150 "$NCU" --clock-control none --kernel-name-base demangled --kernel-name regex:cache_batch_body --launch-skip 3 --launch-count 2 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
  --log-file "$O/all/ncu-ycsbC.txt" $B $ARGS >/dev/null 2>&1
echo "ncu rc=$? (${SECONDS}s)"; grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occ|Block Size|Grid Size|Stall|Memory Throughput|Compute \(SM\)|Warp Cycles Per Issued" "$O/all/ncu-ycsbC.txt" | head -40
timeout 150 $B cache --backend cuda --ops 2e6 --workloads A,C --distributions zipfian --capacity 0.5,1.0 --bucket-widths 8 \
  --repeats 3 --warmup 1 --out "$O/all/ycsb-cap.jsonl" >/dev/null 2>"$O/all/ycsb-cap.log"
echo "cap rc=$? (${SECONDS}s)"; grep "^ycsb" "$O/all/ycsb-cap.log"
