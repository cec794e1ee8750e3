#!/usr/bin/env bash
# call D (session 17): where a cuckoo tile-1 insert batch spends its time at LF 0.9 / 0.95 (ncu:
# duration of each kernel of one insert batch), quadratic at C = 2^27 LF 0.8 beside cuco's double
# hashing, cuckoo mixed batches at tiles 1 and 8. Binary: 363f965 (= c0e9391's include tree).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
for lf in 0.9 0.95; do
  WARPKV_COMMIT=363f965 timeout 120 $NCU --metrics gpu__time_duration.sum --kernel-name regex:"insert_op|sort_into_lists" --launch-count 8 --csv \
    $B/new-bench static --backend cuda --keys 2^26 --repeats 1 --warmup 1 --map cuckoo --tile 1 --load-factors $lf > $OUT/ncu-cuckoo-$lf.csv 2> $OUT/ncu-cuckoo-$lf.err; el ncu-$lf $?
done
F=$OUT/call-d-static.jsonl
WARPKV_COMMIT=363f965 timeout 60 $B/new-bench static --backend cuda --keys 2^26 --repeats 3 --warmup 1 --out $F --map quadratic --tile 1 --load-factors 0.8 > $OUT/quad.log 2>&1; el quad $?
PEERS="cuco" KEY_TILE=1 LFS=0.8 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 CUCO_OPS=insert,find_hit,find_miss WARPKV_COMMIT=363f965 timeout 150 bash $B/run-peers.sh $F > $OUT/peers-cuco.log 2>&1; el cuco $?
left=$(( 580 - ($(date +%s)-t0) ))
if [ $left -gt 40 ]; then
  WARPKV_COMMIT=363f965 timeout $((left-5)) $B/new-bench dynamic --backend cuda --map cuckoo --tile 1,8 --ops 1e5,1e7 --key-range 100,10000,10000000 --repeats 3 --warmup 1 --out $OUT/call-d-dynamic.jsonl > $OUT/dynamic.log 2>&1; el dynamic $?
fi
grep -h "G ops\|WARN\|rror" $OUT/*.log | cut -c1-170
for f in $OUT/ncu-*.csv; do echo "== $f"; grep -v "^==" $f | cut -c1-220 | head -30; done
tail -3 $OUT/peers-cuco.log
