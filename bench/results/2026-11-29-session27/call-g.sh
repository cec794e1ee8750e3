#!/usr/bin/env bash
# call G (session 27): warpkv-bench of HEAD (commit file) beside the peers in one call: `cache
# --hkv --no-ycsb` with HKV ae24eec (dim 8), and `static` hopscotch-buckets (H64 at 9728038's
# code) at LF 0.8 / 0.9 / 0.95 beside cuco dc0f9fc (8 variants) and BGHT 7584547 (4 variants).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/warpkv-bench $B/peers/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
C=$(cat $B/commit)
F=$R/call-g-cache-hkv.jsonl
PEERS=hkv HKV_DIMS=8 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$C timeout 150 bash $B/peers/run-peers.sh $F > $R/peers-hkv.log 2>&1; el hkv $?
WARPKV_COMMIT=$C timeout 150 $B/warpkv-bench cache --backend cuda --hkv --no-ycsb --out $F > $R/cache.log 2>&1; el cache $?
H=$R/call-g-static-h64-2p27-peers.jsonl
S="static --backend cuda --map hopscotch-buckets --tile 1 --repeats 3 --warmup 1 --out $H --keys 2^26 --load-factors 0.8,0.9,0.95 --no-statuses"
WARPKV_COMMIT=$C timeout 125 $B/warpkv-bench $S > $R/h64.log 2>&1; el h64 $?
PEERS=cuco KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$C timeout 100 bash $B/peers/run-peers.sh $H > $R/peers-cuco.log 2>&1; el cuco $?
PEERS=bght KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$C timeout 85 bash $B/peers/run-peers.sh $H > $R/peers-bght.log 2>&1; el bght $?
tar czf $OUT/call-g.tgz -C $OUT r
python3 - $F <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    print('%-6s %-45s %-17s %.2f %.3f %s' % (r.get('peer','warpkv'), r.get('variant',r.get('sync','')+'/'+r.get('layout','')), r['operation'], r['load'], r['gops'], r.get('verified','')))
PY
python3 - $H <<'PY'
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
