#!/usr/bin/env bash
# call F (session 30): ab-sub of d557473's submitter, client window max(2, buffers) x threshold /
# threads: buffers 4 / 6 / 8, thresholds 2^15 .. 2^18, 16 and 8 client threads (16 cores).
B=$(cd "$(dirname "$0")" && pwd)
xz -dkf $B/ab-sub-new.xz; chmod +x $B/ab-sub-new
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nproc
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
S=$R/call-f-ab-sub.jsonl
for th in 16 8 16; do timeout 90 $B/ab-sub-new t$th $th 32768,65536,131072,262144 4,6,8 8388608 0 >> $S 2>> $R/ab-sub.err; el ab-sub-t$th $?; done
python3 - $S <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print('%-4s buf %d thr %8d win %7d %8.1f M ops/s %.3fs h2d %.2f GB/s (%.1f%% of %.1f)  d2h %.2f (%.1f%%) fail %d' % (r['tag'],r['buffers'],r['threshold'],r['window'],r['mops'],r['s'],r['h2d_gbs'],100*r['h2d_fraction_of_pinned'],r['pinned_h2d_gbs'],r['d2h_gbs'],100*r['d2h_fraction_of_pinned'],r['failures']))
PY
