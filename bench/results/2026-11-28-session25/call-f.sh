#!/usr/bin/env bash
# call F (session 25): a35ea33 (v10) / 7d7c9db (v10b) alternated via ab-h64; 7d7c9db's H64 suite
# and sanitizers (gpu-check); warpkv-bench static of 7d7c9db beside cuco (all variants) and BGHT
# (all variants) on the same key sets; the memory ceilings.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/warpkv-bench $B/warpkv-ceiling $B/ab-h64-* $B/peers/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-f-ab-h64.jsonl
for v in v10 v10b v10b v10; do timeout 50 $B/ab-h64-$v $v 0.5,0.8,0.9,0.95 3 >> $J 2>> $R/ab.err; el ab-$v $?; done
( export OUT=$R/check; WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B/build WARPKV_GPU_MODULES=hopscotch_buckets WARPKV_GPU_PARALLEL=1 \
  WARPKV_STEP_TIMEOUT_S=200 timeout 230 bash scripts/gpu-check > $R/check.log 2>&1 ); el gpu-check $?
tail -4 $R/check.log; grep -h "\[ registers" $R/check/test-hopscotch_buckets.log | head -2
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $R/check/sanitize-*.log | sort | uniq -c
F=$R/call-f-static-h64-2p27-peers.jsonl
S="static --backend cuda --map hopscotch-buckets --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^26 --load-factors 0.8,0.9,0.95 --no-statuses"
WARPKV_COMMIT=7d7c9db timeout 90 $B/warpkv-bench $S > $R/h64-1.log 2>&1; el h64 $?
PEERS=cuco KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 REPEATS=3 WARMUP=1 WARPKV_COMMIT=7d7c9db timeout 170 bash $B/peers/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
PEERS=bght KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 REPEATS=3 WARMUP=1 WARPKV_COMMIT=7d7c9db timeout 100 bash $B/peers/run-peers.sh $F > $R/peers-bght.log 2>&1; el bght $?
WARPKV_COMMIT=7d7c9db timeout 90 $B/warpkv-bench $S > $R/h64-2.log 2>&1; el h64-again $?
timeout 60 $B/warpkv-ceiling --ops read,cas --access-bytes 8,32,64 --lanes 1,4 --ilp 1 --loads plain,relaxed --repeats 3 --out $R/call-f-ceiling.jsonl > $R/ceiling.log 2>&1; el ceiling $?
tar czf $OUT/call-f.tgz -C $OUT r
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['stashed']))
for k,v in sorted(d.items()): print(k,v)
PY
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
grep -h '"op"' $R/call-f-ceiling.jsonl 2>/dev/null | python3 -c "
import sys,json
for l in sys.stdin:
  r=json.loads(l); print({k:r.get(k) for k in ('op','access_bytes','lanes','loads','gops','g_accesses_per_s','median_ms') if k in r})" | head -20
tail -3 $R/ab.err $R/peers-cuco.log $R/peers-bght.log
