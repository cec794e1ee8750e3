#!/usr/bin/env bash
# call B (session 27): where the cache's writes spend their time. ncu over every kernel of
# ab-cache (V24) at capacity 2^24, loads 0.5 and 0.75 (durations, instructions, grid, registers,
# occupancy); the fast write pass of the last set batch at 0.5 in detail; HKV's kernels of the
# same workload (durations, instructions) for comparison.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/ab-cache-* $B/peers/bin/*
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
LM=--metrics=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio
timeout 150 ncu $LM --csv --page raw $B/ab-cache-v24 v24 8 0.5,0.75 1 24 > $R/ncu-all-v24.csv 2> $R/ncu-all-v24.err; el all-v24 $?
timeout 100 ncu $LM --csv --page raw $B/peers/bin/hkv_driver --capacity-log2 24 --loads 0.5,0.75 --repeats 1 --warmup 0 --ops find,get_or_set,insert_or_assign --out $R/hkv-scratch.jsonl > $R/ncu-all-hkv.csv 2> $R/ncu-all-hkv.err; el all-hkv $?
SEC="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis --section InstructionStats"
M=--metrics=lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex_op_atom.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio
timeout 100 ncu --kernel-name regex:"cache_passE1" --launch-skip 19 --launch-count 1 $SEC $M --csv --page details $B/ab-cache-v24 v24 8 0.5 1 24 > $R/ncu-fast-v24.csv 2> $R/ncu-fast-v24.err; el fast-v24 $?
timeout 100 ncu --kernel-name regex:"cache_passE1" --launch-skip 19 --launch-count 1 $SEC $M --csv --page details $B/ab-cache-old old 8 0.5 1 24 > $R/ncu-fast-old.csv 2> $R/ncu-fast-old.err; el fast-old $?
tar czf $OUT/call-b.tgz -C $OUT r
for f in $R/ncu-fast-*.csv; do echo "== $f"; grep -E '"(Duration|Achieved Occupancy|Registers Per Thread|Theoretical Occupancy|Grid Size|Memory Throughput|Eligible Warps Per Scheduler|Issued Warp Per Scheduler|Warp Cycles Per Issued Instruction|No Eligible|L2 Hit Rate|Executed Instructions|Block Limit Registers)"|smsp__average_warps_issue_stalled|thread_inst_executed_per' $f | awk -F'","' '{print $(NF-2), $(NF-1), $NF}' | head -60; done
