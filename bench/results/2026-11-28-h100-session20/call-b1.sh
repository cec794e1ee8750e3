#!/usr/bin/env bash
# call B1 (session 20): ceilings; cuckoo tile 1 at C = 2^27, LF 0.95 / 0.9, no statuses: NEW
# (2c51e37: the map keeps its handback list) against OLD (bb904aa's kernels), alternated; open
# addressing tile 1 at C = 2^26 (NEW, without and with statuses); BGHT and cuco beside.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/*-bench $B/warpkv-ceiling $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-b1-static-cuckoo.jsonl
timeout 90 $B/warpkv-ceiling --ops read,cas --access-bytes 32,64 --lanes 1,4,8 --ilp 1 --loads plain --repeats 5 --warmup 1 --out $F > $R/ceiling.log 2>&1; el ceiling $?
S="static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map cuckoo --tile 1 --no-statuses"
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.95 > $R/cuckoo-new-95.log 2>&1; el new-95 $?
WARPKV_COMMIT=bb904aa timeout 80 $B/old-bench $S --load-factors 0.95 > $R/cuckoo-old-95.log 2>&1; el old-95 $?
WARPKV_COMMIT=bb904aa timeout 80 $B/old-bench $S --load-factors 0.9 > $R/cuckoo-old-90.log 2>&1; el old-90 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.9 > $R/cuckoo-new-90.log 2>&1; el new-90 $?
PEERS="bght" KEY_TILE=1 LFS=0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 BGHT_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 100 bash $B/run-peers.sh $F > $R/peers-bght.log 2>&1; el bght $?
F=$R/call-b1-static-oa.jsonl
S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^25 --load-factors 0.5,0.8"
WARPKV_COMMIT=$NEW_COMMIT timeout 85 $B/new-bench $S --no-statuses > $R/oa-new-nostat.log 2>&1; el oa-nostat $?
WARPKV_COMMIT=$NEW_COMMIT timeout 85 $B/new-bench $S > $R/oa-new-stat.log 2>&1; el oa-stat $?
PEERS="cuco" KEY_TILE=1 LFS=0.5,0.8 CAPS=26 EXTRA= REPEATS=3 WARMUP=1 CUCO_OPS=insert WARPKV_COMMIT=$NEW_COMMIT timeout 60 bash $B/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
tar czf $OUT/call-b1.tgz -C $OUT r
grep -h "G ops\|WARN\|rror" $R/cuckoo-*.log $R/oa-*.log | cut -c1-170
grep "insert\|find" $R/peers-bght.log $R/peers-cuco.log | grep -v "NOT VERIFIED" | cut -c1-110
grep '"tool":"warpkv-ceiling"' $R/call-b1-static-cuckoo.jsonl | python3 -c "
import sys,json
for l in sys.stdin:
  r=json.loads(l); print({k:r.get(k) for k in ('op','access_bytes','lanes','load','gops','sector_gbs')})"
