#!/usr/bin/env bash
# call C (session 21): NEW2 = d89c2aa (the handback append back in tile_op_body, only for handing_back_op;
# the async second pass on a persistent grid; cuckoo erase_only) against HEAD (fc4dc1d):
# open addressing tile 1 at C = 2^26 (insert and insert_async; cuco beside), cuckoo tile 1 at
# LF 0.95 (BGHT beside), and dynamic 1e5-operation batches with more repeats (9a3dac3 beside).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/*-bench $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-c-static-oa-cuco.jsonl
S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^25 --load-factors 0.5,0.8 --no-statuses"
WARPKV_COMMIT=$NEW_COMMIT timeout 75 $B/new-bench $S > $R/oa-new-sync.log 2>&1; el oa-new-sync $?
WARPKV_COMMIT=fc4dc1d timeout 75 $B/head-bench $S > $R/oa-head-sync.log 2>&1; el oa-head-sync $?
WARPKV_COMMIT=$NEW_COMMIT timeout 75 $B/new-bench $S --async-inserts > $R/oa-new-async.log 2>&1; el oa-new-async $?
PEERS="cuco" KEY_TILE=1 LFS=0.5,0.8 CAPS=26 EXTRA= CUCO_OPS=insert REPEATS=3 WARMUP=1 WARPKV_COMMIT=$NEW_COMMIT timeout 40 bash $B/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
F=$R/call-c-static-cuckoo-bght.jsonl
S="static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map cuckoo --tile 1 --no-statuses --load-factors 0.95"
WARPKV_COMMIT=fc4dc1d timeout 65 $B/head-bench $S > $R/cuckoo-head-95.log 2>&1; el head-95 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 65 $B/new-bench $S > $R/cuckoo-new-95.log 2>&1; el new-95 $?
PEERS="bght" KEY_TILE=1 LFS=0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 BGHT_OPS=insert WARPKV_COMMIT=$NEW_COMMIT timeout 40 bash $B/run-peers.sh $F > $R/peers-bght.log 2>&1; el bght $?
F=$R/call-c-dynamic-1e5.jsonl
D="dynamic --backend cuda --map cuckoo,hopscotch --ops 1e5 --key-range 100,10000,100000,10000000 --repeats 9 --warmup 2 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 60 $B/new-bench $D > $R/dyn-new.log 2>&1; el dyn-new $?
WARPKV_COMMIT=fc4dc1d timeout 70 $B/head-bench $D > $R/dyn-head.log 2>&1; el dyn-head $?
WARPKV_COMMIT=9a3dac3 timeout 75 $B/old9a-bench $D > $R/dyn-9a.log 2>&1; el dyn-9a $?
tar czf $OUT/call-c.tgz -C $OUT r
grep -h "G ops\|WARN\|rror" $R/oa-*.log $R/cuckoo-*.log | cut -c1-170
grep "insert" $R/peers-bght.log $R/peers-cuco.log | grep -v "NOT VERIFIED" | cut -c1-110
python3 - $F <<'PY'
import json,sys,collections
rows=collections.defaultdict(dict)
for l in open(sys.argv[1]):
    r=json.loads(l)
    rows[(r['map'],r['mix'],r['key_range'])][r['commit']]=(round(r['gops'],4), round(min(r['samples_ms']),3))
for k,v in sorted(rows.items(), key=lambda kv: str(kv[0])): print(k, v)
PY
