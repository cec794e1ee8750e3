#!/usr/bin/env bash
# call F: the suites whose code changed this session (core: phased mixed batches; hopscotch and
# the H64 layout with E5; open addressing) on the GPU, with compute-sanitizer at reduced scale;
# registers of the phased batch's kernels (cuobjdump -res-usage of the bench)
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.gz; do gunzip -kf $f; done
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
(cuobjdump -res-usage $B/bench 2>&1 | grep -A1 "listed_op\|partition_ops" | paste - - > $OUT/res-usage-listed.txt) &
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_MODULES="core hopscotch_buckets open_addressing hopscotch" OUT=$OUT/f timeout 540 scripts/gpu-check > $OUT/check-f.txt 2>&1
echo "gpu-check rc $?"
wait
tail -25 $OUT/check-f.txt
for f in $OUT/f/test-*.json; do python3 -c "import json;d=json.load(open('$f'));print('$f',d['tests'],d['failures'])"; done
grep -c . $OUT/res-usage-listed.txt
tar czf $OUT/f.tgz -C $OUT f && rm -rf $OUT/f
