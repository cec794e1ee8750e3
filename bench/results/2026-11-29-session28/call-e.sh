#!/usr/bin/env bash
# call E (session 28): V34 (the candidate)'s cache suite on the device with memcheck, racecheck and
# synccheck (gpu-check, prebuilt test binary); then ab-cache of 58b3714 (V33) against V34 (the one-lock fast path taken only
# while the table stays at most 5/8 full), alternated three times at dim 8, HierarchicalKV ae24eec
# beside (dim 8) in the same call.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/build/tests/*.xz; do xz -dkf $f; done
chmod +x $B/build/tests/* $B/ab-cache-*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
( export OUT=$R/check; WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B/build WARPKV_GPU_MODULES=cache WARPKV_GPU_PARALLEL=1 \
  WARPKV_GPU_SANITIZERS="memcheck racecheck synccheck" WARPKV_STEP_TIMEOUT_S=200 timeout 270 bash scripts/gpu-check > $R/check.log 2>&1 ); el gpu-check $?
tail -6 $R/check.log; grep -h "\[ registers\|registers\|PASSED\|FAILED\|SKIPPED \]" $R/check/test-cache.log | head -14
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $R/check/sanitize-*.log | sort | uniq -c
A=$R/call-e-ab-cache-hkv.jsonl
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done; chmod +x $B/peers/bin/*
PEERS=hkv HKV_DIMS=8 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$(cat $B/commit) timeout 150 bash $B/peers/run-peers.sh $A > $R/peers-hkv.log 2>&1; el hkv $?
tail -3 $R/peers-hkv.log
for v in v33 v34 v34 v33 v33 v34; do AB_VALUE_WORDS=4 timeout 60 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v $?; done
python3 - $A <<'PY'
import json,sys
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    if 'peer' in r: print(r['peer'], r['operation'], r['load'], round(r['gops'],3), r.get('verified','')); continue
    rows.setdefault((r['load'],r['operation']),[]).append((r['tag'],round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, v)
PY
