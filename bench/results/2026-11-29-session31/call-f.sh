#!/usr/bin/env bash
# call F (session 31): the cache suite of the commit in `commit` (V43 + V44 + V45) on the device with
# memcheck, racecheck, synccheck (gpu-check, prebuilt build/dev warpkv_cache_tests); then ab-cache
# (the --hkv workload, default design W 8 T 8, u64 keys, no groups) of V44 (c0c3337) and V45,
# alternated twice: the u64 kernels' rows level?
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/build/tests/*.xz $B/*.xz; do xz -dkf $f; done
chmod +x $B/build/tests/* $B/ab-cache-*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
for rep in 1 2; do
  for v in v44 v45; do timeout 40 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 27 >> $R/call-f-ab-cache.jsonl 2> $R/ab-$v-$rep.err; el ab-$v-$rep $?; done
done
( export OUT=$R/check; WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B/build WARPKV_GPU_MODULES=cache WARPKV_GPU_PARALLEL=1 \
  WARPKV_GPU_SANITIZERS="memcheck racecheck synccheck" WARPKV_STEP_TIMEOUT_S=190 timeout 235 bash scripts/gpu-check > $R/check.log 2>&1 ); el gpu-check $?
tail -6 $R/check.log; grep -h "\[ registers\|PASSED\|FAILED\|SKIPPED \]" $R/check/test-cache.log | head -20
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $R/check/sanitize-*.log | sort | uniq -c
tar czf $OUT/call-f-check.tgz -C $R check check.log; rm -rf $R/check
python3 - $R/call-f-ab-cache.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    try: r=json.loads(l)
    except Exception: continue
    print(r.get('tag'), r.get('operation'), r.get('load'), '%.3f'%r.get('gkvs',0), 'wrong', r.get('wrong_values'))
PY
