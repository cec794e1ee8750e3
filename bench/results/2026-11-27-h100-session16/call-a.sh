#!/usr/bin/env bash
# call A (session 16): cuckoo tile 1 (a thread per operation, 16-byte bucket reads) and tile 8, new vs 3241fea (tile 8),
# beside BGHT; registers of the new cuckoo kernels; the cuckoo suite on the device
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/old-bench $B/bin/* $B/warpkv_cuckoo_tests 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
F=$OUT/call-a-static-cuckoo.jsonl
S="static --backend cuda --map cuckoo --keys 2^26 --repeats 3 --warmup 1 --load-factors 0.8,0.9,0.95 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 150 $B/new-bench $S --tile 1,8 > $OUT/cuckoo-new.log 2>&1; echo "new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=3241fea timeout 100 $B/old-bench $S --tile 8 > $OUT/cuckoo-old.log 2>&1; echo "old rc $? $(( $(date +%s)-t0 )) s"
PEERS="bght" CEILING=0 LFS=0.8,0.9,0.95 CAPS=27 EXTRA=26:0.8 REPEATS=3 WARMUP=1 WARPKV_COMMIT=$NEW_COMMIT timeout 120 bash $B/run-peers.sh $F > $OUT/peers.log 2>&1; echo "peers rc $? $(( $(date +%s)-t0 )) s"
grep -h "G ops\|WARN\|rror" $OUT/cuckoo-*.log | cut -c1-200
tail -2 $OUT/peers.log
cuobjdump -res-usage $B/new-bench 2>/dev/null | grep -A1 "cuckoo_ref" | grep -B1 "REG" | grep -o "Function [^:]*kernelILi[18]E[^:]*\|REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*" > $OUT/res-usage-cuckoo.txt
left=$(( 580 - ($(date +%s)-t0) ))
if [ -x $B/warpkv_cuckoo_tests ] && [ $left -gt 60 ]; then
  WARPKV_TEST_BACKEND=cuda timeout $((left-10)) $B/warpkv_cuckoo_tests > $OUT/cuckoo-tests.log 2>&1; echo "tests rc $? $(( $(date +%s)-t0 )) s"
  tail -3 $OUT/cuckoo-tests.log; grep "registers\|FAILED" $OUT/cuckoo-tests.log
fi
