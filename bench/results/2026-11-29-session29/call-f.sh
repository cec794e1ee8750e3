#!/usr/bin/env bash
# call F (session 29): ncu of one_bucket_lru's fast write pass (ab-cache of 8293e5f, W 32 T 4,
# λ 0.5, the third timed insert_or_assign batch) and of HierarchicalKV ae24eec's insert_or_assign
# kernel on the same workload (its driver, dim 8, λ 0.5, a timed batch), same sections and metrics.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/ab-cache-* $B/peers/bin/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
# HKV's kernel names on a small table (one timing metric per launch)
timeout 60 ncu --metrics gpu__time_duration.sum --csv $B/peers/bin/hkv_driver --dim 8 --loads 0.5 --capacity-log2 20 --ops insert_or_assign --repeats 2 --warmup 1 --out $R/hkv-small.jsonl > $R/hkv-kernels.csv 2> $R/hkv-kernels.err; el hkv-names $?
python3 - $R/hkv-kernels.csv <<'PY'
import csv,sys,collections
c=collections.Counter()
for r in csv.reader(open(sys.argv[1])):
    if len(r)>5 and r[0].isdigit(): c[r[4][:150]]+=1
for k,v in c.most_common(12): print(v,k)
PY
SEC="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis --section InstructionStats --section SourceCounters"
M=--metrics=lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex_op_atom.sum,lts__t_sectors_srcunit_tex.sum,dram__sectors_read.sum,dram__sectors_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio
prof() { n=$1; base=$2; shift 2; timeout 200 ncu --kernel-name-base $base $SEC $M -o $R/$n "$@" > $R/$n.log 2>&1; el $n $?
  ncu -i $R/$n.ncu-rep --csv --page details > $R/$n-details.csv 2>/dev/null; }
prof ncu-ob-fast-05 mangled --kernel-name regex:"one_bucket.*cache_passE1" --launch-skip 72 --launch-count 1 $B/ab-cache-ob ncu 32 0.5 5 27
# HKV: the most frequent kernel of the small run whose name says insert/upsert, a timed batch
K=$(python3 - $R/hkv-kernels.csv <<'PY'
import csv,sys,collections
c=collections.Counter()
for r in csv.reader(open(sys.argv[1])):
    if len(r)>5 and r[0].isdigit(): c[r[4]]+=1
names=[k for k,_ in c.most_common() if 'upsert' in k.lower() or 'insert' in k.lower()]
import re
print(re.escape(re.split(r'::',names[0].split('(')[0].split('<')[0])[-1]) if names else 'upsert')
PY
)
echo "hkv kernel regex: $K"
prof ncu-hkv-iao-05 demangled --kernel-name regex:"$K" --launch-skip 68 --launch-count 1 $B/peers/bin/hkv_driver --dim 8 --loads 0.5 --capacity-log2 27 --ops insert_or_assign --repeats 10 --warmup 1 --out $R/hkv-ncu.jsonl
rm -f $R/*.ncu-rep
for f in $R/ncu-*-details.csv; do echo "== $f"; grep -E '"(Kernel Name|Duration|Achieved Occupancy|Registers Per Thread|Theoretical Occupancy|Grid Size|Block Size|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Eligible Warps Per Scheduler|Issued Warp Per Scheduler|Warp Cycles Per Issued Instruction|No Eligible|L2 Hit Rate|Executed Instructions|Avg. Active Threads Per Warp)"|smsp__average_warps_issue_stalled|thread_inst_executed_per|lts__t_|dram__sectors' $f | awk -F'","' '{print $(NF-2), $(NF-1), $NF}' | grep -v "_per_issue_active.ratio\",\"inst\",\"0" | head -60; grep -o '"Kernel Name","[^"]*' $f | head -1 | cut -c1-200; done
