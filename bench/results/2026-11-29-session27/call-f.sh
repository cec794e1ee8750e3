#!/usr/bin/env bash
# call F (session 27): the landed cache (bucket versions, the gated complete pass, the per-slot
# words for rw_lock only): its suite on the device, memcheck, racecheck and synccheck
# (gpu-check, prebuilt test binary); ab-cache of e0d66a7 and the landed tree alternated twice with
# HKV ae24eec beside.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/build/tests/*.xz; do xz -dkf $f; done
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/build/tests/* $B/ab-cache-* $B/peers/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
( export OUT=$R/check; WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B/build WARPKV_GPU_MODULES=cache WARPKV_GPU_PARALLEL=1 \
  WARPKV_GPU_SANITIZERS="memcheck racecheck synccheck" WARPKV_STEP_TIMEOUT_S=200 timeout 260 bash scripts/gpu-check > $R/check.log 2>&1 ); el gpu-check $?
tail -6 $R/check.log; grep -h "\[ registers\|registers\|PASSED\|FAILED\|SKIPPED \]" $R/check/test-cache.log | head -14
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $R/check/sanitize-*.log | sort | uniq -c
F=$R/call-f-cache-hkv.jsonl
PEERS=hkv HKV_DIMS=8 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$(cat $B/commit) timeout 150 bash $B/peers/run-peers.sh $F > $R/peers-hkv.log 2>&1; el hkv $?
A=$R/call-f-ab-cache.jsonl
for v in old new old new; do timeout 60 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v $?; done
tar czf $OUT/call-f.tgz -C $OUT r
python3 - $F <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    print('%-6s %-45s %-17s %.2f %.3f %s' % (r.get('peer','warpkv'), r.get('variant',''), r['operation'], r['load'], r['gops'], r.get('verified','')))
PY
python3 - $A <<'PY'
import json,sys
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['load'],r['operation']),[]).append((r['tag'],round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, v)
PY
