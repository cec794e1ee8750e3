#!/usr/bin/env bash
# call B (session 18): the complete pass reading buckets 16 bytes at a time (NEW) against cb20974
# (A) at LF 0.9 / 0.95 (cuckoo tile 1, C = 2^27), alternated; ncu of NEW's complete insert at 0.95
# (time, occupancy, SIMT efficiency, requests, stall reasons); the cuckoo suite on the device and
# compute-sanitizer memcheck on its reduced run.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz $B/tests/*.xz; do xz -dkf $f; done
chmod +x $B/new-bench $B/a-bench $B/tests/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
F=$OUT/call-b-static.jsonl
S="static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map cuckoo --tile 1"
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.95 > $OUT/cuckoo-new-95.log 2>&1; el new-95 $?
WARPKV_COMMIT=cb20974 timeout 80 $B/a-bench $S --load-factors 0.95 > $OUT/cuckoo-a-95.log 2>&1; el a-95 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.9 > $OUT/cuckoo-new-90.log 2>&1; el new-90 $?
WARPKV_COMMIT=cb20974 timeout 80 $B/a-bench $S --load-factors 0.9 > $OUT/cuckoo-a-90.log 2>&1; el a-90 $?
M=gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum,lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex.sum,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_membar_per_warp_active.pct,smsp__warp_issue_stalled_sleeping_per_warp_active.pct,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_drain_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct,smsp__warp_issue_stalled_no_instruction_per_warp_active.pct
timeout 120 ncu --metrics $M --kernel-name-base demangled --kernel-name regex:"listed_op<insert_op" --launch-count 2 --csv \
  $B/new-bench static --backend cuda --keys 2^26 --repeats 1 --warmup 1 --map cuckoo --tile 1 --load-factors 0.95 > $OUT/ncu-b.csv 2> $OUT/ncu-b.err; el ncu $?
grep '^"' $OUT/ncu-b.csv | awk -F'","' '{print $(NF-2), $(NF-1), $NF}' | tail -40
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_MODULES="cuckoo" WARPKV_GPU_SANITIZE_MODULES="cuckoo" WARPKV_GPU_SANITIZERS="memcheck" WARPKV_STEP_TIMEOUT_S=200 OUT=$OUT/check timeout $(( 590 - ($(date +%s)-t0) )) scripts/gpu-check > $OUT/check.txt 2>&1; el gpu-check $?
grep "registers \]\|PASSED\|FAILED\|== \|ERROR SUMMARY\|hazard" $OUT/check.txt | head -30
tar czf $OUT/check.tgz -C $OUT check && rm -rf $OUT/check
grep -h "G ops\|WARN\|rror" $OUT/*.log | cut -c1-170
