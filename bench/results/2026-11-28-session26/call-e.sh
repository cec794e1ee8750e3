#!/usr/bin/env bash
# call E (session 26): `static` of HEAD (commit file; H64 with the stash first) at LF 0.8 / 0.9 /
# 0.95 beside cuco (8 variants) and BGHT (4 variants) on the same key sets; HEAD's H64 suite,
# memcheck and synccheck on the device; ab-h64m at LF 0.97 / 0.99 (max_load_factor 0.995).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz $B/build/tests/*.xz; do xz -dkf $f; done
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/warpkv-bench $B/ab-h64m-head $B/peers/bin/* $B/build/tests/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
C=$(cat $B/commit)
F=$R/call-e-static-h64-2p27-peers.jsonl
S="static --backend cuda --map hopscotch-buckets --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^26 --load-factors 0.8,0.9,0.95 --no-statuses"
WARPKV_COMMIT=$C timeout 125 $B/warpkv-bench $S > $R/h64.log 2>&1; el h64 $?
PEERS=cuco KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$C timeout 100 bash $B/peers/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
PEERS=bght KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$C timeout 85 bash $B/peers/run-peers.sh $F > $R/peers-bght.log 2>&1; el bght $?
( export OUT=$R/check; WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B/build WARPKV_GPU_MODULES=hopscotch_buckets WARPKV_GPU_PARALLEL=1 \
  WARPKV_GPU_SANITIZERS="memcheck synccheck" WARPKV_STEP_TIMEOUT_S=150 timeout 170 bash scripts/gpu-check > $R/check.log 2>&1 ); el gpu-check $?
tail -4 $R/check.log; grep -h "\[ registers\|PASSED\|FAILED" $R/check/test-hopscotch_buckets.log | head -6
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $R/check/sanitize-*.log | sort | uniq -c
H64_MAX_LF=0.995 timeout 40 $B/ab-h64m-head head-maxlf0.995 0.97,0.99 3 > $R/call-e-ab-h64m-lf099.jsonl 2> $R/ab.err; el ab-lf099 $?
cat $R/call-e-ab-h64m-lf099.jsonl; tail -2 $R/ab.err
tar czf $OUT/call-e.tgz -C $OUT r
python3 - $F <<'PY'
import json,sys,collections
rows=collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    r=json.loads(l)
    who=(r['peer']+':'+r.get('variant','')) if 'peer' in r else 'warpkv'
    rows[(r.get('load_factor'),r.get('operation'))][who].append((round(r['gops'],2), r.get('verified', True)))
for k,v in sorted(rows.items(), key=lambda kv: str(kv[0])):
    if k[1] in ('insert','find_hit','find_miss'):
        print(k, v.get('warpkv'), sorted(((g[0][0],w) for w,g in v.items() if w!='warpkv' and g[0][1] is True), reverse=True)[:3], [w for w,g in v.items() if g[0][1] is not True])
PY
