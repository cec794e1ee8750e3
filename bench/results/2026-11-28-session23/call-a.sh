#!/usr/bin/env bash
# call A (session 23): ops per thread for the one-lane linear insert (ab-2op.cu, standalone kernels
# with warpkv's linear_map insert in the same process), warpkv-bench linear tile 1 at C = 2^26 with
# cuco beside, and ncu of cuco's lp_cg1 / lp_cg2 inserts, warpkv's fast insert and the experiment's
# 1-op / 2-op kernels at C = 2^26, LF 0.5.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/*-bench $B/ab-2op $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
timeout 60 $B/ab-2op 26 h200-r1 2 > $R/call-a-ops-per-thread.jsonl 2> $R/ab-2op.err; el ab-2op $?
F=$R/call-a-static-linear-2p26-cuco.jsonl
S="static --backend cuda --map linear --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^25 --load-factors 0.5,0.8 --no-statuses"
WARPKV_COMMIT=c4d7d47 timeout 60 $B/head-bench $S > $R/lin-head-1.log 2>&1; el lin-head-1 $?
PEERS="cuco" KEY_TILE=1 LFS=0.5,0.8 CAPS=26 EXTRA= CUCO_OPS=insert CUCO_VARIANTS=lp_cg1,lp_cg2,lp_cg4,lp_cg8 REPEATS=3 WARMUP=1 WARPKV_COMMIT=c4d7d47 timeout 40 bash $B/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
WARPKV_COMMIT=c4d7d47 timeout 60 $B/head-bench $S > $R/lin-head-2.log 2>&1; el lin-head-2 $?
timeout 60 $B/ab-2op 26 h200-r2 1 0.5 >> $R/call-a-ops-per-thread.jsonl 2>> $R/ab-2op.err; el ab-2op-2 $?
SEC="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
M=--metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex_op_atom.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio
prof() { name=$1; shift; timeout 120 ncu --kernel-name-base mangled $SEC $M --csv --page details "$@" > $R/ncu-$name.csv 2> $R/ncu-$name.err; el ncu-$name $?; }
prof cuco-lp2 --kernel-name regex:insert --launch-skip 1 --launch-count 1 $B/bin/cuco_driver --lf 0.5 --capacity-log2 26 --repeats 1 --warmup 1 --seed 42 --key-tile 1 --variants lp_cg2 --ops insert --out $R/ncu-scratch.jsonl
prof cuco-lp1 --kernel-name regex:insert --launch-skip 1 --launch-count 1 $B/bin/cuco_driver --lf 0.5 --capacity-log2 26 --repeats 1 --warmup 1 --seed 42 --key-tile 1 --variants lp_cg1 --ops insert --out $R/ncu-scratch.jsonl
prof warpkv --kernel-name regex:handing_back --launch-skip 1 --launch-count 1 $B/head-bench static --backend cuda --map linear --tile 1 --repeats 1 --warmup 1 --keys 2^25 --load-factors 0.5 --no-statuses --out $R/ncu-scratch.jsonl
prof exp-1op --kernel-name regex:"insert_kILi1ELb1" --launch-skip 1 --launch-count 1 $B/ab-2op 26 ncu 1 0.5
prof exp-2op --kernel-name regex:"insert_kILi2ELb1" --launch-skip 1 --launch-count 1 $B/ab-2op 26 ncu 1 0.5
tar czf $OUT/call-a.tgz -C $OUT r
cat $R/call-a-ops-per-thread.jsonl | python3 -c "
import sys,json
for l in sys.stdin:
  r=json.loads(l); print(r.get('tag'), r.get('variant'), r.get('load_factor'), r.get('gops'), r.get('inserted'), r.get('size')) if 'variant' in r else print(r)"
grep -h "G ops\|WARN\|rror" $R/lin-*.log | cut -c1-170
grep "insert" $R/peers-cuco.log | cut -c1-110
for f in $R/ncu-*.csv; do echo "== $f"; grep -E '"(Duration|Achieved Occupancy|Registers Per Thread|Theoretical Occupancy|Memory Throughput|DRAM Throughput|Eligible Warps Per Scheduler|Issued Warp Per Scheduler|Warp Cycles Per Issued Instruction|No Eligible|L2 Hit Rate|L1/TEX Hit Rate|Executed Instructions|Block Limit Registers|Mem Busy|Max Bandwidth)"|smsp__average_warps_issue_stalled' $f | awk -F'","' '{print $(NF-2), $(NF-1), $NF}' | head -60; done
