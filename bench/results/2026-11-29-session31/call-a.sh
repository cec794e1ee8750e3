#!/usr/bin/env bash
# call A (session 31): YCSB through warpkv-bench of 03c483e (the landed cache code), workloads C and
# A at 100 % capacity, bucket widths 8 / 16, the four layouts; then ncu of every byte-key kernel of
# a short C trace (3e6 records, one 1e6-op run batch after the load): where a YCSB C batch's time goes.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/warpkv-bench
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
C=$(cat $B/commit)
F=$R/call-a-ycsb.jsonl
WARPKV_COMMIT=$C timeout 300 $B/warpkv-bench cache --backend cuda --workloads C,A --capacity 1.0 --bucket-widths 8,16 --layouts slab,slab-digest,inline,inline-digest --out $F > $R/ycsb.log 2>&1; el ycsb $?
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis"
WARPKV_COMMIT=$C timeout 200 ncu --clock-control none --cache-control none $SEC --kernel-name regex:"byte_key" --launch-count 60 --csv --page details --log-file $R/ncu-ycsb-c.csv $B/warpkv-bench cache --backend cuda --workloads C --capacity 1.0 --bucket-widths 8 --layouts slab --ops 1e6 --warmup 0 --repeats 1 > $R/ncu-app.log 2> $R/ncu.err; el ncu $?
gzip -kf $R/ncu-ycsb-c.csv
grep "ycsb " $R/ycsb.log | cut -c1-160
python3 - $R/ncu-ycsb-c.csv <<'PY'
import csv,sys,collections
rows=list(csv.reader([l for l in open(sys.argv[1]) if l.startswith('"')]))
h=rows[0]; rows=rows[1:]
ix={k:i for i,k in enumerate(h)}
k=collections.OrderedDict()
for r in rows:
    key=(r[ix['ID']],r[ix['Kernel Name']][:90])
    k.setdefault(key,{})[r[ix['Metric Name']]]=r[ix['Metric Value']]
for (i,n),m in k.items():
    print(i, n[:70], 'dur', m.get('Duration'), 'dram%', m.get('DRAM Throughput'), 'mem%', m.get('Memory Throughput'), 'regs', m.get('Registers Per Thread'), 'occ', m.get('Achieved Occupancy'), 'grid', m.get('Grid Size'))
PY
