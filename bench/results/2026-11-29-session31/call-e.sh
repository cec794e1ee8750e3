#!/usr/bin/env bash
# call E (session 31): V45 (operations settled lane by lane; variants/v45.diff on c0c3337) against
# V44 (c0c3337), alternated twice: YCSB C and A zipfian at 100 % (W 8 slab).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/*-bench
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-e-ycsb-ab.jsonl
Y="cache --backend cuda --workloads C,A --distributions zipfian --capacity 1.0 --bucket-widths 8 --layouts slab --out $F"
for rep in 1 2; do
  WARPKV_COMMIT=c0c3337 timeout 60 $B/v44-bench $Y > $R/y-v44-$rep.log 2>&1; el y-v44-$rep $?
  WARPKV_COMMIT=c0c3337+v45 timeout 60 $B/v45-bench $Y > $R/y-v45-$rep.log 2>&1; el y-v45-$rep $?
done
cd $R && tar czf $OUT/call-e-logs.tgz *.log && rm -f *.log; cd - >/dev/null
python3 - $F <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    print('ycsb', r['commit'], r['ycsb_workload'], r['capacity_fraction'], '%.3f'%r['gops'], 'hit %.4f'%r['hit_ratio'])
PY
