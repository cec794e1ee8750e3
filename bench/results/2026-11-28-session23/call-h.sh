#!/usr/bin/env bash
# call H (session 23): NEW2 (50e16fd: upsert_solo at 256 x 2) against HEAD (c4d7d47), alternated
# twice: open addressing tile 1, C = 2^26, LF 0.5 / 0.8, no statuses; linear at C = 2^27 LF 0.5;
# cuco in the same call. Then the core and open-addressing suites of 50e16fd on the device with
# memcheck / racecheck / synccheck on their reduced runs.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz $B/tests/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/*-bench $B/bin/* $B/tests/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-h-static-oa-2p26-cuco.jsonl
S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^25 --load-factors 0.5,0.8 --no-statuses"
WARPKV_COMMIT=50e16fd timeout 80 $B/new-bench $S > $R/oa-new-1.log 2>&1; el oa-new-1 $?
WARPKV_COMMIT=c4d7d47 timeout 80 $B/head-bench $S > $R/oa-head-1.log 2>&1; el oa-head-1 $?
PEERS="cuco" KEY_TILE=1 LFS=0.5,0.8 CAPS=26 EXTRA= CUCO_OPS=insert REPEATS=3 WARMUP=1 WARPKV_COMMIT=50e16fd timeout 60 bash $B/run-peers.sh $F > $R/peers-cuco-2p26.log 2>&1; el cuco-2p26 $?
WARPKV_COMMIT=c4d7d47 timeout 80 $B/head-bench $S > $R/oa-head-2.log 2>&1; el oa-head-2 $?
WARPKV_COMMIT=50e16fd timeout 80 $B/new-bench $S > $R/oa-new-2.log 2>&1; el oa-new-2 $?
F=$R/call-h-static-linear-2p27-cuco.jsonl
S="static --backend cuda --map linear --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^26 --load-factors 0.5 --no-statuses"
WARPKV_COMMIT=50e16fd timeout 60 $B/new-bench $S > $R/lin27-new.log 2>&1; el lin27-new $?
WARPKV_COMMIT=c4d7d47 timeout 60 $B/head-bench $S > $R/lin27-head.log 2>&1; el lin27-head $?
PEERS="cuco" KEY_TILE=1 LFS=0.5 CAPS=27 EXTRA= CUCO_OPS=insert CUCO_VARIANTS=lp_cg1,lp_cg2 REPEATS=3 WARMUP=1 WARPKV_COMMIT=50e16fd timeout 40 bash $B/run-peers.sh $F > $R/peers-cuco-2p27.log 2>&1; el cuco-2p27 $?
export WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_PARALLEL=1 WARPKV_STEP_TIMEOUT_S=150
WARPKV_GPU_MODULES="core open_addressing" WARPKV_GPU_SANITIZERS=" " OUT=$R/check timeout 160 scripts/gpu-check > $R/check.txt 2>&1 &
WARPKV_GPU_MODULES="core open_addressing" WARPKV_GPU_SKIP_TESTS=1 WARPKV_GPU_SANITIZERS="memcheck racecheck synccheck" OUT=$R/sanitize timeout 160 scripts/gpu-check > $R/sanitize.txt 2>&1 &
wait; el tests $?
tar czf $OUT/call-h.tgz -C $OUT r
grep -h "G ops\|WARN\|rror" $R/oa-*.log $R/lin27-*.log | cut -c1-120
grep "G ops" $R/peers-cuco-*.log | cut -c1-110
grep -h "== \|ERROR SUMMARY\|RACECHECK SUMMARY\|PASSED\|FAILED" $R/check.txt $R/sanitize.txt $R/check/*.log $R/sanitize/*.log 2>/dev/null | sort | uniq -c | head -30
grep -rh "registers \]" $R/check | grep "T=1 (L=4)"
python3 - $R/call-h-static-oa-2p26-cuco.jsonl $R/call-h-static-linear-2p27-cuco.jsonl <<'PY'
import json,sys,collections
for f in sys.argv[1:]:
    rows=collections.defaultdict(lambda: collections.defaultdict(list))
    for l in open(f):
        r=json.loads(l)
        who=r.get('variant') if 'peer' in r else r.get('commit')
        rows[(r.get('map'),r.get('load_factor'),r.get('operation'))][who].append(round(r['gops'],3))
    for k,v in sorted(rows.items(), key=lambda kv: str(kv[0])):
        if k[2] in ('insert','find_hit','find_miss'): print(f.split('/')[-1][:22], k, dict(v))
PY
