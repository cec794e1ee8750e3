#!/usr/bin/env bash
# call C (session 27): V24's cache on the --hkv workload with buckets of 16 (tile 8 and tile 16)
# beside W = 8, tile 8; max_kicks 0 and 16 at W = 8 (what the cuckoo walks cost at λ 0.75); ncu of
# the fast write pass at λ 0.5 and of the complete pass at λ 0.75 (W = 8, T = 8), with per-SASS
# stall samples of the fast pass (ab-cache built with -lineinfo).
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-cache-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
A=$R/call-c-ab-cache.jsonl
for t in 8 16 17 8 16 17; do timeout 60 $B/ab-cache-v24w v24 $t 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$t $?; done
for k in 0 16; do AB_MAX_KICKS=$k timeout 60 $B/ab-cache-v24w v24-k$k 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-k$k $?; done
SEC="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis --section InstructionStats --section SourceCounters"
M=--metrics=lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex_op_atom.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio
prof() { n=$1; shift; timeout 150 ncu --kernel-name-base mangled $SEC $M -o $R/$n "$@" > $R/$n.log 2>&1; el $n $?
  ncu -i $R/$n.ncu-rep --csv --page details > $R/$n-details.csv 2>/dev/null
  ncu -i $R/$n.ncu-rep --page source --print-source sass --csv > $R/$n-sass.csv 2> $R/$n-sass.err; gzip -f $R/$n-sass.csv; }
prof ncu-fast-05 --kernel-name regex:"cache_passE1" --launch-skip 72 --launch-count 1 $B/ab-cache-v24w ncu 8 0.5 5 27
prof ncu-complete-075 --kernel-name regex:"cache_passE0" --launch-skip 104 --launch-count 1 $B/ab-cache-v24w ncu 8 0.75 5 27
rm -f $R/*.ncu-rep
tar czf $OUT/call-c.tgz -C $OUT r
python3 - $A <<'PY'
import json,sys
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['load'],r['operation']),[]).append(('%s W%d T%d' % (r['tag'], r['bucket_width'], r['tile']),round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, v)
PY
for f in $R/ncu-*-details.csv; do echo "== $f"; grep -E '"(Duration|Achieved Occupancy|Registers Per Thread|Theoretical Occupancy|Grid Size|Memory Throughput|Eligible Warps Per Scheduler|Issued Warp Per Scheduler|Warp Cycles Per Issued Instruction|No Eligible|L2 Hit Rate|Executed Instructions|Block Limit Registers)"|smsp__average_warps_issue_stalled|thread_inst_executed_per' $f | awk -F'","' '{print $(NF-2), $(NF-1), $NF}' | head -60; done
