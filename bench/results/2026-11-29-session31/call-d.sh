#!/usr/bin/env bash
# call D (session 31): V44 (V43 + the read phase at tile 4 for byte keys) against V43, alternated
# three times: YCSB C and A zipfian at 100 % (W 8 slab); then V44's full YCSB matrix (A, B, C, D, F;
# 10 / 50 / 100 %), and ncu (kernel times) of a one-batch C trace of V44 as call B's.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/*-bench
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
V44=$(cat $B/v44.commit)
F=$R/call-d-ycsb-ab.jsonl
Y="cache --backend cuda --workloads C,A --distributions zipfian --capacity 1.0 --bucket-widths 8 --layouts slab --out $F"
for rep in 1 2 3; do
  WARPKV_COMMIT=03c483e+v43 timeout 60 $B/v43-bench $Y > $R/y-v43-$rep.log 2>&1; el y-v43-$rep $?
  WARPKV_COMMIT=$V44 timeout 60 $B/v44-bench $Y > $R/y-v44-$rep.log 2>&1; el y-v44-$rep $?
done
WARPKV_COMMIT=$V44 timeout 200 $B/v44-bench cache --backend cuda --workloads A,B,C,D,F --distributions zipfian --capacity 0.1,0.5,1.0 --bucket-widths 8 --layouts slab --out $R/call-d-ycsb-v44.jsonl > $R/y-v44-all.log 2>&1; el y-v44-all $?
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats"
timeout 100 ncu --clock-control none --cache-control none $SEC --kernel-name-base mangled --kernel-name regex:"byte_key" --launch-count 60 --csv --page details --log-file $R/ncu-v44-ycsb-c.csv $B/v44-bench cache --backend cuda --workloads C --distributions zipfian --capacity 1.0 --bucket-widths 8 --layouts slab --ops 1e6 --warmup 0 --repeats 1 > $R/ncu-app.log 2> $R/ncu.err; el ncu $?
gzip -f $R/ncu-v44-ycsb-c.csv
cd $R && tar czf $OUT/call-d-logs.tgz *.log && rm -f *.log; cd - >/dev/null
python3 - $R/call-d-ycsb-ab.jsonl $R/call-d-ycsb-v44.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    for l in open(f):
        r=json.loads(l)
        print('ycsb', r['commit'], r['ycsb_workload'], r['capacity_fraction'], '%.3f'%r['gops'], 'hit %.4f lru %.4f'%(r['hit_ratio'],r['exact_lru_hit_ratio']))
PY
