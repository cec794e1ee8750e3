#!/usr/bin/env bash
# call J (session 25): where the fast insert kernel (LF 0.8) and the complete pass (LF 0.95)
# stall, per SASS instruction (ncu SourceCounters; 7d7c9db's headers, ab-h64 built with -lineinfo).
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-h64-li
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
S="--section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy"
timeout 150 ncu --kernel-name-base mangled --kernel-name regex:handing_back --launch-skip 1 --launch-count 1 $S -o $R/fast08 $B/ab-h64-li fast 0.8 2 > $R/ncu-fast.log 2>&1; el fast $?
timeout 150 ncu --kernel-name-base mangled --kernel-name regex:passE1E --launch-skip 1 --launch-count 1 $S -o $R/complete095 $B/ab-h64-li complete 0.95 2 > $R/ncu-complete.log 2>&1; el complete $?
for n in fast08 complete095; do
  ncu -i $R/$n.ncu-rep --page source --print-source sass --csv > $R/$n-sass.csv 2> $R/$n-sass.err; el src-$n $?
  ncu -i $R/$n.ncu-rep --page details --csv > $R/$n-details.csv 2>/dev/null
  gzip -f $R/$n-sass.csv
done
ls -la $R
head -c 1500 $R/fast08-sass.err
