#!/usr/bin/env bash
# call A (session 26): 5ebb422 (head; H64 code = 3d83c78's) / V14 (the plan's sliding window of hop
# bits) alternated via ab-h64; per-phase profiles profhead / prof14; V14's H64 suite and sanitizers
# (gpu-check); `static` of head at LF 0.95 beside cuco (8 variants) and BGHT (4 variants)
# on the same key sets; ab-cache (kv_cache<u64, 8, T> at T = 8, 4, 2, 1 on the --hkv
# workload).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
for f in $B/build/tests/*.xz; do xz -dkf $f; done
chmod +x $B/ab-* $B/warpkv-bench-head $B/peers/bin/* $B/build/tests/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-a-ab-h64.jsonl
for v in head v14 c32 c8 c8 c32 v14 head; do timeout 60 $B/ab-h64-$v $v 0.8,0.9,0.95 3 >> $J 2>> $R/ab.err; el ab-$v $?; done
timeout 60 $B/ab-h64-profhead profhead 0.9,0.95 2 > $R/call-a-profhead.jsonl 2>> $R/ab.err; el profhead $?
timeout 60 $B/ab-h64-prof14 prof14 0.9,0.95 2 > $R/call-a-prof14.jsonl 2>> $R/ab.err; el prof14 $?
( export OUT=$R/check; WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B/build WARPKV_GPU_MODULES=hopscotch_buckets WARPKV_GPU_PARALLEL=1 \
  WARPKV_STEP_TIMEOUT_S=200 timeout 230 bash scripts/gpu-check > $R/check.log 2>&1 ); el gpu-check $?
tail -4 $R/check.log; grep -h "\[ registers\|PASSED\|FAILED" $R/check/test-hopscotch_buckets.log | head -6
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $R/check/sanitize-*.log | sort | uniq -c
F=$R/call-a-static-h64-2p27-lf095-peers.jsonl
S="static --backend cuda --map hopscotch-buckets --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^26 --load-factors 0.95 --no-statuses"
WARPKV_COMMIT=$(cat $B/commit-head) timeout 45 $B/warpkv-bench-head $S > $R/h64-head.log 2>&1; el h64-head $?
PEERS=cuco KEY_TILE=1 LFS=0.95 CAPS=27 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$(cat $B/commit-head) timeout 45 bash $B/peers/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
PEERS=bght KEY_TILE=1 LFS=0.95 CAPS=27 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$(cat $B/commit-head) timeout 40 bash $B/peers/run-peers.sh $F > $R/peers-bght.log 2>&1; el bght $?
timeout 100 $B/ab-cache-head head 8,4,2,1 0.5,0.75,1.0 5 > $R/call-a-ab-cache.jsonl 2>> $R/ab.err; el ab-cache $?
tar czf $OUT/call-a.tgz -C $OUT r
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['stashed'],r['capacity']==r['capacity_after']))
for k,v in sorted(d.items()): print(k,v)
PY
for f in $R/call-a-profhead.jsonl $R/call-a-prof14.jsonl; do python3 - $f <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('experiment')!='h64-prof': print(sys.argv[1][-14:], {k:r[k] for k in ('load_factor','insert_gops','stashed')}); continue
    tot=r['complete_upsert'][1] or 1
    print(sys.argv[1][-14:], 'LF',r['load_factor'], ' '.join('%s %d/%.1f%%/%dk' % (k[:14], v[0], 100.0*v[1]/tot, v[1]/max(v[0],1)/1000) for k,v in r.items() if isinstance(v,list)))
PY
done
python3 - $F <<'PY'
import json,sys,collections
rows=collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    r=json.loads(l)
    who=(r['peer']+':'+r.get('variant','')) if 'peer' in r else 'warpkv:'+r.get('commit','')
    rows[(r.get('load_factor'),r.get('operation'))][who].append((round(r['gops'],2), r.get('verified', True)))
for k,v in sorted(rows.items(), key=lambda kv: str(kv[0])):
    if k[1] in ('insert','find_hit','find_miss'):
        print(k, {w:g for w,g in v.items() if w.startswith('warpkv')}, sorted(((g[0][0],w) for w,g in v.items() if not w.startswith('warpkv') and g[0][1] is True), reverse=True)[:3], [w for w,g in v.items() if g[0][1] is not True])
PY
python3 - $R/call-a-ab-cache.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r['tile'], r['load'], '%-17s' % r['operation'], round(r['gkvs'],3), r['count'], r['wrong_values'])
PY
tail -3 $R/ab.err
