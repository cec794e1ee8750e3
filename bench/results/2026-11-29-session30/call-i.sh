#!/usr/bin/env bash
# call I (session 30): warpkv-bench of the commit in `commit` (V39 + V42 lock groups) `cache --hkv
# --hkv-one-bucket --no-ycsb` beside HierarchicalKV ae24eec (dim 8) in one file: the session's
# final cache rows.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/warpkv-bench $B/peers/bin/*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
C=$(cat $B/commit)
F=$R/call-i-cache-hkv.jsonl
PEERS=hkv HKV_DIMS=8 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$C timeout 150 bash $B/peers/run-peers.sh $F > $R/peers-hkv.log 2>&1; el hkv $?
WARPKV_COMMIT=$C timeout 200 $B/warpkv-bench cache --backend cuda --hkv --hkv-one-bucket --no-ycsb --out $F > $R/cache.log 2>&1; el cache $?
python3 - $F <<'PY'
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
hkv={}
for r in rows:
    if r.get('peer'): hkv.setdefault((r['operation'],r['load']),[]).append(r['gops'])
for r in rows:
    if r.get('peer') or 'load' not in r: continue
    b=max(hkv.get((r['operation'],r['load']),[0]))
    print('%-12s %-17s %.2f %.3f hkv %.3f ratio %.2f size %s %s' % (r['placement'],r['operation'],r['load'],r['gops'],b,r['gops']/b if b else 0,r.get('size'),r.get('verified','')))
PY
