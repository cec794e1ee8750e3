#!/usr/bin/env bash
# call C (session 18): ncu of f677df0's listed complete insert (cuckoo tile 1, LF 0.95, C = 2^27):
# time, occupancy, SIMT efficiency, requests, stall reasons.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/new-bench
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
M=gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum,lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex.sum,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_membar_per_warp_active.pct,smsp__warp_issue_stalled_sleeping_per_warp_active.pct,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_drain_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct,smsp__warp_issue_stalled_no_instruction_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__warp_issue_stalled_selected_per_warp_active.pct,smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,sm__cycles_elapsed.avg,smsp__cycles_active.avg
timeout 150 ncu --metrics $M --kernel-name-base demangled --kernel-name regex:"pass.1" --launch-count 2 --csv \
  $B/new-bench static --backend cuda --keys 2^26 --repeats 1 --warmup 1 --map cuckoo --tile 1 --load-factors 0.95 > $OUT/ncu-c.csv 2> $OUT/ncu-c.err; echo "ncu rc $?"
grep -c '^"' $OUT/ncu-c.csv
