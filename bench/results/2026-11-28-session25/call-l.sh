#!/usr/bin/env bash
# call L (session 25): `static` of V13 (the commit named in WARPKV_COMMIT) at LF 0.9 / 0.95 beside
# cuco (8 variants) and BGHT (4 variants) on the same key sets; then V13's H64 suite on the device
# (tests only).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/warpkv-bench $B/peers/bin/* $B/build/tests/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
C=$(cat $B/commit)
F=$R/call-l-static-h64-2p27-peers.jsonl
S="static --backend cuda --map hopscotch-buckets --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^26 --load-factors 0.9,0.95 --no-statuses"
WARPKV_COMMIT=$C timeout 62 $B/warpkv-bench $S > $R/h64.log 2>&1; el h64 $?
PEERS=cuco KEY_TILE=1 LFS=0.9,0.95 CAPS=27 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$C timeout 58 bash $B/peers/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
PEERS=bght KEY_TILE=1 LFS=0.9,0.95 CAPS=27 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$C timeout 50 bash $B/peers/run-peers.sh $F > $R/peers-bght.log 2>&1; el bght $?
WARPKV_TEST_BACKEND=cuda timeout 35 $B/build/tests/warpkv_hopscotch_buckets_tests > $R/test-h64.log 2>&1; el tests $?
grep -h "\[ registers\|PASSED\|FAILED" $R/test-h64.log | head -8
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
tar czf $OUT/call-l.tgz -C $OUT r
