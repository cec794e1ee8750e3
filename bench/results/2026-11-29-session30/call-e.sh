#!/usr/bin/env bash
# call E (session 30): (1) ab-sub of d557473's submitter, a client window of 2 x threshold /
# threads (w2) against max(2, buffers) x threshold / threads (wb), alternated twice; (2) the cache
# suite of the commit in `commit` (V39 lock groups, the new submitter) with memcheck, racecheck,
# synccheck (gpu-check, prebuilt build/dev warpkv_cache_tests).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz $B/build/tests/*.xz; do xz -dkf $f; done
chmod +x $B/ab-sub-* $B/build/tests/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nproc
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
S=$R/call-e-ab-sub.jsonl
for v in w2:2 wb:0 wb:0 w2:2; do t=${v%%:*}; w=${v##*:}; timeout 60 $B/ab-sub-new $t 16 16384,131072,1048576 2,3,4 8388608 $w >> $S 2>> $R/ab-sub.err; el ab-sub-$t $?; done
python3 - $S <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print('%-4s buf %d thr %8d win %7d %8.1f M ops/s %.3fs h2d %.2f GB/s (%.1f%% of %.1f)  d2h %.2f (%.1f%%) fail %d' % (r['tag'],r['buffers'],r['threshold'],r['window'],r['mops'],r['s'],r['h2d_gbs'],100*r['h2d_fraction_of_pinned'],r['pinned_h2d_gbs'],r['d2h_gbs'],100*r['d2h_fraction_of_pinned'],r['failures']))
PY
( export OUT=$R/check; WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B/build WARPKV_GPU_MODULES=cache WARPKV_GPU_PARALLEL=1 \
  WARPKV_GPU_SANITIZERS="memcheck racecheck synccheck" WARPKV_STEP_TIMEOUT_S=190 timeout 235 bash scripts/gpu-check > $R/check.log 2>&1 ); el gpu-check $?
tail -6 $R/check.log; grep -h "\[ registers\|PASSED\|FAILED\|SKIPPED \]" $R/check/test-cache.log | head -20
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $R/check/sanitize-*.log | sort | uniq -c
