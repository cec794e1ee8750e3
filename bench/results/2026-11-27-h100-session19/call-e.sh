#!/usr/bin/env bash
# call E (session 19): ncu of the insert kernels of linear and quadratic tile 1 at C = 2^26,
# LF 0.5 (f27c7ee): time, DRAM bytes, L2 requests, atomics, occupancy, per kernel launch.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/new-bench 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio,launch__grid_size,launch__registers_per_thread
for m in linear quadratic; do
  timeout 120 ncu --metrics $M --kernel-name-base demangled --kernel-name regex:"insert_op" --launch-count 6 --csv \
    $B/new-bench static --backend cuda --keys 2^25 --repeats 2 --warmup 1 --map $m --tile 1 --load-factors 0.5 > $OUT/ncu-$m.csv 2> $OUT/ncu-$m.err; el ncu-$m $?
  grep '^"' $OUT/ncu-$m.csv | awk -F'","' '{k=$5; i=index(k,"pass"); print $1, substr(k,i,14), $(NF-2), $NF}' | tail -30
done
