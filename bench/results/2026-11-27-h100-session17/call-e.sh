#!/usr/bin/env bash
# call E (session 17): kernel durations of one cuckoo tile-1 insert batch at LF 0.95 (ncu), then
# the core, cuckoo and H64 suites of c0e9391's tree on the device, compute-sanitizer memcheck,
# racecheck and synccheck on the reduced core and cuckoo runs (scripts/gpu-check).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz $B/tests/*.xz; do xz -dkf $f; done
chmod +x $B/new-bench $B/tests/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
timeout 90 ncu --metrics gpu__time_duration.sum --kernel-name-base demangled --kernel-name regex:"insert_op|sort_into_lists" --launch-count 6 --csv \
  $B/new-bench static --backend cuda --keys 2^26 --repeats 1 --warmup 1 --map cuckoo --tile 1 --load-factors 0.95 > $OUT/ncu-cuckoo-0.95.csv 2> $OUT/ncu-cuckoo-0.95.err; el ncu $?
grep -v '^{' $OUT/ncu-cuckoo-0.95.csv | grep -o '"[^"]*tile_op_body<1, [a-z_]*<[a-z_]*op<[^,]*\|"[^"]*sort_into_lists[^"]*"\|"gpu__time_duration.sum","[a-z]*","[0-9.,]*"' | paste - - | cut -c1-200
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$B WARPKV_GPU_MODULES="core cuckoo hopscotch_buckets" WARPKV_GPU_SANITIZE_MODULES="core cuckoo" WARPKV_STEP_TIMEOUT_S=200 OUT=$OUT/check timeout $(( 585 - ($(date +%s)-t0) )) scripts/gpu-check > $OUT/check.txt 2>&1; el gpu-check $?
grep "registers \]\|PASSED\|FAILED\|== \|ERROR SUMMARY\|hazard" $OUT/check.txt | head -40
tar czf $OUT/check.tgz -C $OUT check && rm -rf $OUT/check
