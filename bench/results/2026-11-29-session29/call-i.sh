#!/usr/bin/env bash
# call I (session 29): warpkv-bench of the commit in `commit` (placement policy, one_bucket_lru)
# `cache --hkv --hkv-one-bucket --no-ycsb` beside HierarchicalKV ae24eec (dim 8) in one file;
# (b178aba: V37 landed; the rows of the code at the end of the session).
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
for l in open(sys.argv[1]):
    r=json.loads(l)
    print('%-6s %-45s %-17s %.2f %.3f %s %s' % (r.get('peer','warpkv'), r.get('variant',r.get('placement','')+'/'+r.get('layout','')), r['operation'], r['load'], r['gops'], r.get('size',''), r.get('verified','')))
PY
