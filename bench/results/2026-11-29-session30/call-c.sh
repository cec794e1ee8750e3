#!/usr/bin/env bash
# call C (session 30): (1) ab-sub (the host front end, submit_bulk, 16 client threads) of b5420fb
# (copies under the lock, one completer) and of the change (copies outside the lock, a completer
# per buffer), alternated twice; (2) warpkv-bench of the commit in `commit` (V39 lock groups,
# the new submitter) `cache --hkv --hkv-one-bucket --no-ycsb --submitter --submit bulk --buffers
# 2,3,4` beside HierarchicalKV ae24eec (dim 8) in one file.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/warpkv-bench $B/ab-sub-* $B/peers/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nproc
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
C=$(cat $B/commit)
S=$R/call-c-ab-sub.jsonl
for v in base new new base; do timeout 100 $B/ab-sub-$v $v 16 >> $S 2>> $R/ab-sub.err; el ab-sub-$v $?; done
python3 - $S <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print('%-5s buf %d thr %8d  %8.1f M ops/s  h2d %.2f GB/s (%.1f%% of %.1f)  d2h %.2f (%.1f%%) fail %d' % (r['tag'],r['buffers'],r['threshold'],r['mops'],r['h2d_gbs'],100*r['h2d_fraction_of_pinned'],r['pinned_h2d_gbs'],r['d2h_gbs'],100*r['d2h_fraction_of_pinned'],r['failures']))
PY
F=$R/call-c-cache-hkv.jsonl
PEERS=hkv HKV_DIMS=8 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$C timeout 150 bash $B/peers/run-peers.sh $F > $R/peers-hkv.log 2>&1; el hkv $?
WARPKV_COMMIT=$C timeout 300 $B/warpkv-bench cache --backend cuda --hkv --hkv-one-bucket --no-ycsb --submitter --submit bulk --buffers 2,3,4 --out $F > $R/cache.log 2>&1; el cache $?
python3 - $F <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if 'load' in r: print('%-6s %-45s %-17s %.2f %.3f %s %s' % (r.get('peer','warpkv'), r.get('variant',r.get('placement','')+'/'+r.get('layout','')), r['operation'], r['load'], r['gops'], r.get('size',''), r.get('verified','')))
    else: print(r.get('experiment'), r.get('buffers'), r.get('threshold'), round(r.get('mops',0),1), round(100*r.get('h2d_fraction_of_pinned',0),1), round(100*r.get('d2h_fraction_of_pinned',0),1), r.get('verified'))
PY
grep -i "pinned\|submitter" $R/cache.log | head -20
