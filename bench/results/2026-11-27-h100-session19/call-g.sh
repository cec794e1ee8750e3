#!/usr/bin/env bash
# call G (session 19): ncu of cuckoo's complete insert at LF 0.95 (f27c7ee: cuckoo kernels of
# 8a3ed57): DRAM bytes and throughput, L2 sectors, to tell bandwidth from latency.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/new-bench 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex.sum,lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex_op_atom.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,smsp__inst_executed_op_membar.sum,sm__warps_active.avg.pct_of_peak_sustained_active
timeout 150 ncu --metrics $M --kernel-name-base demangled --kernel-name regex:"insert_op" --launch-count 4 --csv \
  $B/new-bench static --backend cuda --keys 2^26 --repeats 1 --warmup 1 --map cuckoo --tile 1 --load-factors 0.95 > $OUT/ncu-cuckoo-95.csv 2> $OUT/ncu-cuckoo-95.err; echo "ncu rc $?"
grep '^"' $OUT/ncu-cuckoo-95.csv | awk -F'","' '{k=$5; i=index(k,"pass"); print $1, substr(k,i,14), $(NF-2), $NF}' | tail -60
