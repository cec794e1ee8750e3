#!/usr/bin/env bash
# call B (session 30): ab-cache, one_bucket_lru W 32 T 4 (arg 32): 2309101 (base), V39 (lock
# groups), V40 (V39 and an L2 prefetch of each group bucket's key lines before its try-lock), V41
# (V40 and the bucket's recency lines), alternated twice; W 16 T 4 (arg 16) V39 / V40 once each.
# Then the cache suite of V39 (build/dev's warpkv_cache_tests) with memcheck, racecheck, synccheck.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/ab-cache-*.xz $B/build/tests/*.xz; do xz -dkf $f; done
chmod +x $B/ab-cache-* $B/build/tests/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-b-ab-cache.jsonl
for v in base:32 v39:32 v40:32 v41:32 v41:32 v40:32 v39:32 base:32 v39:16 v40:16; do b=${v%%:*}; a=${v##*:}; AB_VALUE_WORDS=4 timeout 90 $B/ab-cache-$b $b-w$a $a 0.5,0.75,1.0 5 >> $F 2>> $R/ab.err; el ab-$v $?; done
python3 - $F <<'PY'
import json,sys,statistics as st
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['load'],r['operation']),{}).setdefault(r['tag'],[]).append((round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, {t:(st.median([x[0] for x in xs]), [x[0] for x in xs], sum(x[1] for x in xs)) for t,xs in v.items()})
PY
tail -3 $R/ab.err
( export OUT=$R/check; WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B/build WARPKV_GPU_MODULES=cache WARPKV_GPU_PARALLEL=1 \
  WARPKV_GPU_SANITIZERS="memcheck racecheck synccheck" WARPKV_STEP_TIMEOUT_S=190 timeout 235 bash scripts/gpu-check > $R/check.log 2>&1 ); el gpu-check $?
tail -6 $R/check.log; grep -h "\[ registers\|PASSED\|FAILED\|SKIPPED \]" $R/check/test-cache.log | head -20
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $R/check/sanitize-*.log | sort | uniq -c
