#!/usr/bin/env bash
# call A2 (session 20): open addressing tile 1 at C = 2^26 with statuses (NEW, OLD); cuckoo tile 1
# at C = 2^27, LF 0.95 / 0.9 without statuses: NEW (3bd7569: handback list, lock sets in
# registers) against OLD (bb904aa's kernels), alternated; BGHT beside.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/*-bench $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-a-static-oa.jsonl
S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^25 --load-factors 0.5,0.8"
WARPKV_COMMIT=bb904aa timeout 85 $B/old-bench $S > $R/oa-old-stat.log 2>&1; el old-stat $?
WARPKV_COMMIT=$NEW_COMMIT timeout 85 $B/new-bench $S > $R/oa-new-stat.log 2>&1; el new-stat $?
F=$R/call-a-static-cuckoo.jsonl
S="static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map cuckoo --tile 1 --no-statuses"
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.95 > $R/cuckoo-new-95.log 2>&1; el new-95 $?
WARPKV_COMMIT=bb904aa timeout 80 $B/old-bench $S --load-factors 0.95 > $R/cuckoo-old-95.log 2>&1; el old-95 $?
WARPKV_COMMIT=bb904aa timeout 80 $B/old-bench $S --load-factors 0.9 > $R/cuckoo-old-90.log 2>&1; el old-90 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 80 $B/new-bench $S --load-factors 0.9 > $R/cuckoo-new-90.log 2>&1; el new-90 $?
PEERS="bght" KEY_TILE=1 LFS=0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 BGHT_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 100 bash $B/run-peers.sh $F > $R/peers-bght.log 2>&1; el bght $?
tar czf $OUT/call-a2.tgz -C $OUT r
grep -h "G ops\|WARN\|rror" $R/oa-*-stat.log $R/cuckoo-*.log | cut -c1-170
grep "insert\|find" $R/peers-bght.log | grep -v "NOT VERIFIED" | cut -c1-90 | head -18
