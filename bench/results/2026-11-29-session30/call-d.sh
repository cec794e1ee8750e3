#!/usr/bin/env bash
# call D (session 30): (1) ab-sub (fixed: 1 ms deadline, clock after construction, >= 16 batches a
# row) of b5420fb (copies under the lock, one completer) and of d557473 (copies outside the lock,
# a completer per buffer), alternated twice, 16 clients; (2) warpkv-bench of the commit in
# `commit` `cache --backend cuda --no-ycsb --submitter --submit bulk --buffers 2,3,4`.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/warpkv-bench $B/ab-sub-*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nproc
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
C=$(cat $B/commit)
S=$R/call-d-ab-sub.jsonl
for v in base new new base; do timeout 60 $B/ab-sub-$v $v 16 >> $S 2>> $R/ab-sub.err; el ab-sub-$v $?; done
python3 - $S <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print('%-5s buf %d thr %8d  %8.1f M ops/s %.3fs h2d %.2f GB/s (%.1f%% of %.1f)  d2h %.2f (%.1f%%) fail %d' % (r['tag'],r['buffers'],r['threshold'],r['mops'],r['s'],r['h2d_gbs'],100*r['h2d_fraction_of_pinned'],r['pinned_h2d_gbs'],r['d2h_gbs'],100*r['d2h_fraction_of_pinned'],r['failures']))
PY
F=$R/call-d-submitter.jsonl
WARPKV_COMMIT=$C timeout 150 $B/warpkv-bench cache --backend cuda --no-ycsb --submitter --submit bulk --buffers 2,3,4 --out $F > $R/submitter.log 2>&1; el submitter $?
grep "pinned\|submitter bulk" $R/submitter.log
