#!/usr/bin/env bash
# call F (session 16): cuckoo tile 8, ae6a178 (the bucket look reading one candidate per call) vs 3241fea, alternated
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
chmod +x $B/new-bench $B/old-bench
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
F=$OUT/call-f-static-cuckoo-t8.jsonl
S="static --backend cuda --map cuckoo --keys 2^26 --repeats 3 --warmup 1 --load-factors 0.8 --tile 8 --out $F"
WARPKV_COMMIT=ae6a178 timeout 70 $B/new-bench $S > $OUT/t8-new.log 2>&1; echo "new rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=3241fea timeout 70 $B/old-bench $S > $OUT/t8-old.log 2>&1; echo "old rc $? $(( $(date +%s)-t0 )) s"
WARPKV_COMMIT=ae6a178 timeout 70 $B/new-bench $S > $OUT/t8-new-2.log 2>&1; echo "new again rc $? $(( $(date +%s)-t0 )) s"
grep -h "G ops" $OUT/t8-*.log | cut -c1-170
