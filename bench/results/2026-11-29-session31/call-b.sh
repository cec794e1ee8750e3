#!/usr/bin/env bash
# call B (session 31): (1) ncu of every byte-key kernel of a one-batch YCSB C trace (call A's
# ncu step, with the kernel filter on mangled names); (2) issue 23's static rows at 03c483e beside
# cuco dc0f9fc and BGHT 7584547 in one file (open addressing tile 1 at C = 2^26 / 2^27, LF 0.5 / 0.8;
# cuckoo tile 1 at C = 2^27, LF 0.8 / 0.9 / 0.95), warpkv alternated around the peers; the ceilings.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/warpkv-bench $B/warpkv-ceiling $B/peers/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
C=$(cat $B/commit)
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis"
WARPKV_COMMIT=$C timeout 150 ncu --clock-control none --cache-control none $SEC --kernel-name-base mangled --kernel-name regex:"byte_key" --launch-count 60 --csv --page details --log-file $R/ncu-ycsb-c.csv $B/warpkv-bench cache --backend cuda --workloads C --distributions zipfian --capacity 1.0 --bucket-widths 8 --layouts slab --ops 1e6 --warmup 0 --repeats 1 > $R/ncu-app.log 2> $R/ncu.err; el ncu $?
F=$R/call-b-static-peers.jsonl
S26="static --backend cuda --map linear,quadratic --tile 1 --repeats 5 --warmup 1 --out $F --keys 2^25 --load-factors 0.5,0.8 --no-statuses"
S27="static --backend cuda --map linear,quadratic --tile 1 --repeats 5 --warmup 1 --out $F --keys 2^26 --load-factors 0.5,0.8 --no-statuses"
SCK="static --backend cuda --map cuckoo --tile 1 --repeats 5 --warmup 1 --out $F --keys 2^26 --load-factors 0.8,0.9,0.95 --no-statuses"
WARPKV_COMMIT=$C timeout 60 $B/warpkv-bench $S26 > $R/oa26-1.log 2>&1; el oa26-1 $?
PEERS=cuco KEY_TILE=1 LFS=0.5,0.8 CAPS=26 REPEATS=5 WARMUP=1 WARPKV_COMMIT=$C timeout 100 bash $B/peers/run-peers.sh $F > $R/cuco26.log 2>&1; el cuco26 $?
WARPKV_COMMIT=$C timeout 60 $B/warpkv-bench $S26 > $R/oa26-2.log 2>&1; el oa26-2 $?
WARPKV_COMMIT=$C timeout 70 $B/warpkv-bench $S27 > $R/oa27.log 2>&1; el oa27 $?
PEERS=cuco KEY_TILE=1 LFS=0.5,0.8 CAPS=27 REPEATS=5 WARMUP=1 WARPKV_COMMIT=$C timeout 110 bash $B/peers/run-peers.sh $F > $R/cuco27.log 2>&1; el cuco27 $?
WARPKV_COMMIT=$C timeout 60 $B/warpkv-bench $SCK > $R/ck.log 2>&1; el ck $?
PEERS=bght KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 REPEATS=5 WARMUP=1 WARPKV_COMMIT=$C timeout 80 bash $B/peers/run-peers.sh $F > $R/bght.log 2>&1; el bght $?
timeout 40 $B/warpkv-ceiling --ops read,cas --access-bytes 8,32,64 --lanes 1,4,8 --ilp 1 --loads plain,relaxed --repeats 3 --out $R/call-b-ceiling.jsonl > $R/ceiling.log 2>&1; el ceiling $?
gzip -kf $R/ncu-ycsb-c.csv
python3 - $R/ncu-ycsb-c.csv <<'PY'
import csv,sys,collections
rows=list(csv.reader([l for l in open(sys.argv[1]) if l.startswith('"')]))
if not rows: sys.exit(0)
h=rows[0]; rows=rows[1:]
ix={k:i for i,k in enumerate(h)}
k=collections.OrderedDict()
for r in rows:
    key=(r[ix['ID']],r[ix['Kernel Name']])
    k.setdefault(key,{})[r[ix['Metric Name']]]=(r[ix['Metric Value']],r[ix['Metric Unit']])
for (i,n),m in k.items():
    tag=n.split('tile_kernel')[-1][:60]
    g=lambda x:'%s%s'%m.get(x,('-',''))
    print(i, tag, 'dur', g('Duration'), 'dram', g('DRAM Throughput'), 'regs', g('Registers Per Thread'), 'occ', g('Achieved Occupancy'), 'grid', g('Grid Size'))
PY
grep -h "G ops" $R/oa*.log $R/ck.log $R/cuco*.log $R/bght.log | cut -c1-130
