#!/usr/bin/env bash
# call A1 (session 20): ceilings, then open addressing tile 1 at C = 2^26, LF 0.5 / 0.8, without
# statuses: NEW (3bd7569: the handback list allocated per batch), OLD (bb904aa's kernels: a
# temporary status array per batch), KEEP (NEW with the list kept in the map: exp-keep-list.patch),
# cuco beside.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/*-bench $B/warpkv-ceiling $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-a-static-oa.jsonl
# (ceilings: in call B, where the carry has room)
S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^25 --load-factors 0.5,0.8 --no-statuses"
WARPKV_COMMIT=$NEW_COMMIT timeout 85 $B/new-bench $S > $R/oa-new-nostat.log 2>&1; el new $?
# (OLD without statuses: not carried, the carry limit)
WARPKV_COMMIT=$NEW_COMMIT+keep-list timeout 85 $B/keep-bench $S > $R/oa-keep-nostat.log 2>&1; el keep $?
PEERS="cuco" KEY_TILE=1 LFS=0.5,0.8 CAPS=26 EXTRA= REPEATS=3 WARMUP=1 CUCO_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 100 bash $B/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
tar czf $OUT/call-a1.tgz -C $OUT r
grep -h "G ops\|WARN\|rror" $R/oa-*.log | cut -c1-170
grep "insert\|find" $R/peers-cuco.log | cut -c1-100
grep '"tool":"warpkv-ceiling"' $F | python3 -c "
import sys,json
for l in sys.stdin:
  r=json.loads(l); print(r.get('op'),r.get('access_bytes'),r.get('lanes'),r.get('load'),round(r.get('gops',0),2))"
