#!/usr/bin/env bash
# call E (session 21): NEW3 (d89c2aa with the mixed batch's index lists allocated per batch again,
# as at fc4dc1d) against NEW2 (d89c2aa), dynamic 1e5-operation batches (hopscotch, cuckoo), 9
# repeats, alternated; then open addressing tile 1 at C = 2^27 (NEW3, insert and insert_async,
# no statuses), cuco beside.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/*-bench $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-e-dynamic-1e5.jsonl
D="dynamic --backend cuda --map hopscotch,cuckoo --ops 1e5 --key-range 100,10000,100000,10000000 --repeats 9 --warmup 2 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 40 $B/new3-bench $D > $R/dyn-new3.log 2>&1; el dyn-new3 $?
WARPKV_COMMIT=d89c2aa timeout 40 $B/new2-bench $D > $R/dyn-new2.log 2>&1; el dyn-new2 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 40 $B/new3-bench $D > $R/dyn-new3b.log 2>&1; el dyn-new3b $?
WARPKV_COMMIT=d89c2aa timeout 40 $B/new2-bench $D > $R/dyn-new2b.log 2>&1; el dyn-new2b $?
F=$R/call-e-static-oa-2p27-cuco.jsonl
S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^26 --load-factors 0.5,0.8 --no-statuses"
WARPKV_COMMIT=$NEW_COMMIT timeout 110 $B/new3-bench $S > $R/oa-new3-sync-2p27.log 2>&1; el oa-sync-2p27 $?
PEERS="cuco" KEY_TILE=1 LFS=0.5,0.8 CAPS=27 EXTRA= CUCO_OPS=insert,find_hit,find_miss REPEATS=3 WARMUP=1 WARPKV_COMMIT=$NEW_COMMIT timeout 60 bash $B/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
tar czf $OUT/call-e.tgz -C $OUT r
grep -h "G ops\|WARN\|rror" $R/oa-*.log | cut -c1-170
grep "insert\|find" $R/peers-cuco.log | grep -v "NOT VERIFIED" | cut -c1-110
python3 - $R/call-e-dynamic-1e5.jsonl <<'PY'
import json,sys,collections
rows=collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    r=json.loads(l)
    rows[(r['map'],r['mix'],r['key_range'])][r['commit']].append((round(r['gops'],4), round(min(r['samples_ms']),3)))
for k,v in sorted(rows.items(), key=lambda kv: str(kv[0])): print(k, dict(v))
PY
