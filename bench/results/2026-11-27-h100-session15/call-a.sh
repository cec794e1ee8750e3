#!/usr/bin/env bash
# call A (session 15): H64 T=1 thread-per-op (new) vs d32f824 (prev) beside cuco/BGHT; ncu source counters of the fast insert kernel
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/prev-bench $B/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
F=$OUT/call-a-static-h64.jsonl
S="static --backend cuda --map hopscotch-buckets --keys 2^26 --tile 1 --repeats 3 --warmup 1 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 120 $B/new-bench $S --load-factors 0.8,0.9,0.95 > $OUT/h64-new.log 2>&1; echo "new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=d32f824 timeout 120 $B/prev-bench $S --load-factors 0.8,0.9,0.95 > $OUT/h64-prev.log 2>&1; echo "prev rc $? $(( $(date +%s)-t0 )) s"
PEERS="cuco bght" CEILING=0 LFS=0.8,0.9,0.95 CAPS=27 EXTRA=26:0.8 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$NEW_COMMIT timeout 100 bash $B/run-peers.sh $F > $OUT/peers.log 2>&1; echo "peers rc $? $(( $(date +%s)-t0 )) s"
grep -h "G ops\|WARN" $OUT/h64-*.log | cut -c1-200
K='regex:insert_opINS_20hopscotch_bucket_refIjjEEjjLNS0_4passE0E'
for b in new prev; do
  left=$(( 570 - ($(date +%s)-t0) ))
  [ $left -lt 40 ] && break
  timeout $((left/2)) ncu --clock-control none --kernel-name-base mangled -k "$K" --launch-skip 1 --launch-count 1 --set full --import-source no -o $OUT/h64ins-$b $B/$b-bench static --backend cuda --map hopscotch-buckets --tile 1 --keys 2^24 --load-factors 0.8 --repeats 1 --warmup 1 > $OUT/ncu-$b.log 2>&1; echo "ncu $b rc $? $(( $(date +%s)-t0 )) s"
  ncu -i $OUT/h64ins-$b.ncu-rep --page details --csv > $OUT/h64ins-$b-details.csv 2>&1
  ncu -i $OUT/h64ins-$b.ncu-rep --page source --csv --print-source sass > $OUT/h64ins-$b-sass.csv 2>&1
  gzip -9 $OUT/h64ins-$b-sass.csv
done
tail -3 $OUT/peers.log
cuobjdump -res-usage $B/new-bench 2>/dev/null | grep -A1 "hopscotch_bucket_ref" | grep -B1 "REG" | grep -o "Function [^:]*kernelILi1E[^:]*\|REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*" > $OUT/res-usage-h64.txt
