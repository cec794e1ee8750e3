#!/usr/bin/env bash
# call D (session 24): where H64's insert time goes (ncu, H200). (1) every kernel's duration of two
# insert batches and two find batches at LF 0.9 and 0.95 (V2 = d11c6d2's headers); (2) full
# sections of the fast insert kernel at LF 0.95 for V2 and V4 (b+1 loaded with the lock CAS: 26-33 %
# slower in call C), and of V2's complete insert pass.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-h64-*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
timeout 120 ncu --kernel-name-base mangled --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread --csv --page details $B/ab-h64-v2 times 0.9,0.95 2 > $R/ncu-times.csv 2> $R/ncu-times.err; el times $?
SEC="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis"
M=--metrics=lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio
prof() { name=$1; shift; timeout 110 ncu --kernel-name-base mangled $SEC $M --csv --page details "$@" > $R/ncu-$name.csv 2> $R/ncu-$name.err; el ncu-$name $?; }
prof fast-v2 --kernel-name regex:handing_back --launch-skip 1 --launch-count 1 $B/ab-h64-v2 fast 0.95 2
prof fast-v4 --kernel-name regex:handing_back --launch-skip 1 --launch-count 1 $B/ab-h64-v4 fast 0.95 2
prof complete-v2 --kernel-name regex:passE1E --launch-skip 1 --launch-count 1 $B/ab-h64-v2 complete 0.95 2
tar czf $OUT/call-d.tgz -C $OUT r
python3 - $R/ncu-times.csv <<'PY'
import csv,sys,collections,re
rows=list(csv.reader(open(sys.argv[1])))
hdr=None; out=collections.OrderedDict()
for r in rows:
    if 'Kernel Name' in r: hdr=r; continue
    if not hdr or len(r)!=len(hdr): continue
    d=dict(zip(hdr,r))
    if d.get('Metric Name')!='gpu__time_duration.sum': continue
    k=re.sub(r'_ZN6warpkv6detail','',d['Kernel Name'])[:90]
    out.setdefault((d['ID'],k),d['Metric Value']+' '+d['Metric Unit'])
for (i,k),v in out.items(): print(i,v,k)
PY
for f in $R/ncu-fast-v2.csv $R/ncu-fast-v4.csv $R/ncu-complete-v2.csv; do echo "== $f"; grep -h '"Duration"\|Achieved Occupancy\|Registers Per\|stalled_long_scoreboard\|stalled_membar\|stalled_lg_throttle\|stalled_drain\|thread_inst_executed_per\|lts__t_requests_srcunit_tex.sum\|op_atom.sum\|lookup_hit.sum\|op_ld.sum"' $f | awk -F'","' '{print $(NF-2), $(NF-1), $NF}' | head -20; done
tail -3 $R/ncu-*.err
