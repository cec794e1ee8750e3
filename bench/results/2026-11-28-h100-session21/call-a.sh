#!/usr/bin/env bash
# call A (session 21): ceilings; cuckoo tile 1 at C = 2^27, no statuses: NEW (6e71e00: weak first
# look in the fast insert; --async-inserts) against HEAD (fc4dc1d), alternated, BGHT beside;
# open addressing tile 1 at C = 2^26,
# insert (sync) and insert_async, no statuses, cuco beside (2^27: a later call).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/*-bench $B/warpkv-ceiling $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-a-static-cuckoo-bght.jsonl
timeout 60 $B/warpkv-ceiling --ops read,cas --access-bytes 32,64 --lanes 1,4,8 --ilp 1 --loads plain --repeats 5 --warmup 1 --out $F > $R/ceiling.log 2>&1; el ceiling $?
S="static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map cuckoo --tile 1 --no-statuses"
WARPKV_COMMIT=$NEW_COMMIT timeout 70 $B/new-bench $S --load-factors 0.95 > $R/cuckoo-new-95.log 2>&1; el new-95 $?
WARPKV_COMMIT=fc4dc1d timeout 70 $B/head-bench $S --load-factors 0.95 > $R/cuckoo-head-95.log 2>&1; el head-95 $?
WARPKV_COMMIT=fc4dc1d timeout 70 $B/head-bench $S --load-factors 0.9 > $R/cuckoo-head-90.log 2>&1; el head-90 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 70 $B/new-bench $S --load-factors 0.9 > $R/cuckoo-new-90.log 2>&1; el new-90 $?
PEERS="bght" KEY_TILE=1 LFS=0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 BGHT_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 80 bash $B/run-peers.sh $F > $R/peers-bght.log 2>&1; el bght $?
F=$R/call-a-static-oa-cuco.jsonl
for c in 25; do
  S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^$c --load-factors 0.5,0.8 --no-statuses"
  WARPKV_COMMIT=$NEW_COMMIT timeout 90 $B/new-bench $S --async-inserts > $R/oa-new-async-$c.log 2>&1; el oa-async-$c $?
  WARPKV_COMMIT=$NEW_COMMIT timeout 90 $B/new-bench $S > $R/oa-new-sync-$c.log 2>&1; el oa-sync-$c $?
done
PEERS="cuco" KEY_TILE=1 LFS=0.5,0.8 CAPS=26 EXTRA= CUCO_OPS=insert,find_hit,find_miss REPEATS=3 WARMUP=1 WARPKV_COMMIT=$NEW_COMMIT timeout 80 bash $B/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
tar czf $OUT/call-a.tgz -C $OUT r
grep -h "G ops\|WARN\|rror" $R/cuckoo-*.log $R/oa-*.log | cut -c1-170
grep "insert\|find" $R/peers-bght.log $R/peers-cuco.log | grep -v "NOT VERIFIED" | cut -c1-110
grep '"tool":"warpkv-ceiling"' $R/call-a-static-cuckoo-bght.jsonl | python3 -c "
import sys,json
for l in sys.stdin:
  r=json.loads(l); print({k:r.get(k) for k in ('op','access_bytes','lanes','load','gops')})"
