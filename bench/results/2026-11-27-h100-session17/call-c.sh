#!/usr/bin/env bash
# call C (session 17): the home pass (NEW) against 363f965 (listed second pass + eviction
# look-ahead), cuckoo tile 1 at LF 0.8 / 0.9 / 0.95, C = 2^27, BGHT beside; NEW first, then
# 363f965, then BGHT.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/b2-bench $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
F=$OUT/call-c-static.jsonl
S="static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map cuckoo --tile 1 --load-factors 0.8,0.9,0.95"
WARPKV_COMMIT=$NEW_COMMIT timeout 170 $B/new-bench $S > $OUT/cuckoo-new.log 2>&1; el cuckoo-new $?
WARPKV_COMMIT=363f965 timeout 170 $B/b2-bench $S > $OUT/cuckoo-b2.log 2>&1; el cuckoo-b2 $?
PEERS="bght" KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 BGHT_OPS=insert,find_hit,find_miss WARPKV_COMMIT=$NEW_COMMIT timeout 120 bash $B/run-peers.sh $F > $OUT/peers-bght.log 2>&1; el bght $?
grep -h "G ops\|WARN\|rror" $OUT/*.log | cut -c1-170
left=$(( 585 - ($(date +%s)-t0) ))
if [ $left -gt 60 ]; then
  chmod +x $B/warpkv_cuckoo_tests
  WARPKV_TEST_BACKEND=cuda timeout $((left-5)) $B/warpkv_cuckoo_tests > $OUT/cuckoo-tests.log 2>&1; el cuckoo-tests $?
  tail -3 $OUT/cuckoo-tests.log; grep "FAILED" $OUT/cuckoo-tests.log | head
fi
