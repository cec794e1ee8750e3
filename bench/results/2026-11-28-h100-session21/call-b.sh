#!/usr/bin/env bash
# call B (session 21): issue 23's "no map slower than at 9a3dac3 on any static or dynamic row":
# warpkv-bench `dynamic` (hopscotch, cuckoo, chained-pool at their default tiles; chained-device
# at 1e5 operations) and `paper --parts static` with NEW, HEAD (fc4dc1d: the A/B of NEW's mixed
# batches' lists in the map's scratch) and 9a3dac3, alternated per map group.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/*-bench 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-b-dynamic-new-head-9a3dac3.jsonl
D="dynamic --backend cuda --map hopscotch,cuckoo,chained-pool --ops 1e5,1e7 --key-range 100,10000,100000,10000000 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 110 $B/new-bench $D > $R/dyn-new.log 2>&1; el dyn-new $?
WARPKV_COMMIT=9a3dac3 timeout 130 $B/old9a-bench $D > $R/dyn-9a.log 2>&1; el dyn-9a $?
WARPKV_COMMIT=fc4dc1d timeout 110 $B/head-bench $D > $R/dyn-head.log 2>&1; el dyn-head $?
D="dynamic --backend cuda --map chained-device --ops 1e5 --key-range 100,10000,100000 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 45 $B/new-bench $D > $R/dyn-dev-new.log 2>&1; el dyn-dev-new $?
WARPKV_COMMIT=9a3dac3 timeout 45 $B/old9a-bench $D > $R/dyn-dev-9a.log 2>&1; el dyn-dev-9a $?
P="paper --backend cuda --parts static --max-keys 2^24 --no-plots --repeats 3 --warmup 1"
WARPKV_COMMIT=$NEW_COMMIT timeout 100 $B/new-bench $P --out-dir $R/paper-new > $R/paper-new.log 2>&1; el paper-new $?
WARPKV_COMMIT=9a3dac3 timeout 120 $B/old9a-bench $P --out-dir $R/paper-9a > $R/paper-9a.log 2>&1; el paper-9a $?
tar czf $OUT/call-b.tgz -C $OUT r
python3 - $F <<'PY'
import json,sys,collections
rows=collections.defaultdict(dict)
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('tool')!='warpkv-bench': continue
    k=(r['map'],r.get('tile'),r['mix'],r['key_range'],r['ops'])
    rows[k][r['commit']]=r['gops']
for k,v in sorted(rows.items(), key=lambda kv: str(kv[0])):
    print(k, {c:round(g,4) for c,g in v.items()})
PY
