#!/usr/bin/env bash
# call J (session 29): ncu with per-SASS stall samples (source page) of one_bucket_lru's fast write
# pass at λ 0.5 (ab-cache of b178aba built with -lineinfo, W 32 T 4, the third timed insert batch):
# where the warp's tiles part ways (call F's branch-resolving stalls).
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-cache-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
SEC="--section SourceCounters --section WarpStateStats --section InstructionStats"
timeout 150 ncu --kernel-name-base mangled $SEC --import-source yes -o $R/ncu-ob-src --kernel-name regex:"one_bucket.*cache_passE1" --launch-skip 72 --launch-count 1 $B/ab-cache-li ncu 32 0.5 5 27 > $R/ncu.log 2>&1; el ncu $?
ncu -i $R/ncu-ob-src.ncu-rep --page source --print-source sass --csv > $R/ncu-ob-src-sass.csv 2> $R/sass.err; el sass $?
ncu -i $R/ncu-ob-src.ncu-rep --page source --print-source cuda --csv > $R/ncu-ob-src-cuda.csv 2> $R/cuda.err; el cuda $?
rm -f $R/*.ncu-rep; gzip -f $R/ncu-ob-src-sass.csv $R/ncu-ob-src-cuda.csv
ls -la $R; tail -3 $R/ncu.log
