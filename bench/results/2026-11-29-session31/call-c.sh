#!/usr/bin/env bash
# call C (session 31): V43 (op_groups' entry words; variants/v43.diff on 03c483e) against 03c483e,
# alternated twice: YCSB C and A zipfian at 100 % (W 8 slab), and the HKV rows once each (no
# groups there: level expected). Then issue 23's rows that call B's limits cut: quadratic at
# C = 2^27 (LF 0.5 / 0.8) beside cuco's double hashing, cuckoo at LF 0.95 beside BGHT.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/*-bench $B/peers/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-c-ycsb-ab.jsonl
Y="cache --backend cuda --workloads C,A --distributions zipfian --capacity 1.0 --bucket-widths 8 --layouts slab --out $F"
for rep in 1 2; do
  WARPKV_COMMIT=03c483e timeout 60 $B/base-bench $Y > $R/y-base-$rep.log 2>&1; el y-base-$rep $?
  WARPKV_COMMIT=03c483e+v43 timeout 60 $B/v43-bench $Y > $R/y-v43-$rep.log 2>&1; el y-v43-$rep $?
done
H="cache --backend cuda --hkv --no-ycsb --out $R/call-c-hkv-ab.jsonl"
WARPKV_COMMIT=03c483e timeout 70 $B/base-bench $H > $R/h-base.log 2>&1; el h-base $?
WARPKV_COMMIT=03c483e+v43 timeout 70 $B/v43-bench $H > $R/h-v43.log 2>&1; el h-v43 $?
F=$R/call-c-static-peers.jsonl
WARPKV_COMMIT=03c483e timeout 110 $B/base-bench static --backend cuda --map quadratic --tile 1 --repeats 5 --warmup 1 --out $F --keys 2^26 --load-factors 0.5,0.8 --no-statuses > $R/q27.log 2>&1; el q27 $?
PEERS=cuco CUCO_VARIANTS=dh_cg1,dh_cg2,dh_cg4,dh_cg8 KEY_TILE=1 LFS=0.5,0.8 CAPS=27 REPEATS=5 WARMUP=1 WARPKV_COMMIT=03c483e timeout 80 bash $B/peers/run-peers.sh $F > $R/cuco27dh.log 2>&1; el cuco27dh $?
WARPKV_COMMIT=03c483e timeout 80 $B/base-bench static --backend cuda --map cuckoo --tile 1 --repeats 5 --warmup 1 --out $F --keys 2^26 --load-factors 0.95 --no-statuses > $R/ck95.log 2>&1; el ck95 $?
PEERS=bght KEY_TILE=1 LFS=0.95 CAPS=27 REPEATS=5 WARMUP=1 WARPKV_COMMIT=03c483e timeout 60 bash $B/peers/run-peers.sh $F > $R/bght95.log 2>&1; el bght95 $?
cd $R && tar czf $OUT/call-c-logs.tgz *.log && rm -f *.log; cd - >/dev/null
python3 - $R/call-c-ycsb-ab.jsonl $R/call-c-hkv-ab.jsonl <<'PY'
import json,sys
for f in sys.argv[1:]:
    for l in open(f):
        r=json.loads(l)
        if 'ycsb_workload' in r: print('ycsb', r['commit'], r['ycsb_workload'], r['distribution'], '%.3f'%r['gops'], 'hit %.4f'%r['hit_ratio'])
        elif 'load' in r: print('hkv', r['commit'], r.get('placement',''), r['operation'], r['load'], '%.3f'%r['gops'], r.get('verified',''))
PY
grep -h "G ops" $R/../*.log 2>/dev/null | head -0
