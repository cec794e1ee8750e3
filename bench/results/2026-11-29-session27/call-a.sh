#!/usr/bin/env bash
# call A (session 27): V24 (bucket versions) against e0d66a7 (per-slot versions), ab-cache
# (kv_cache<u64, 8, 8>, the --hkv workload) alternated twice, the no-fence variant once (an
# experiment only: not sound), HKV ae24eec beside (dim 8) in the same call.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/ab-cache-* $B/peers/bin/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-a-cache-hkv.jsonl
PEERS=hkv HKV_DIMS=8 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$(cat $B/commit) timeout 150 bash $B/peers/run-peers.sh $F > $R/peers-hkv.log 2>&1; el hkv $?
tail -3 $R/peers-hkv.log
A=$R/call-a-ab-cache.jsonl
for v in old v24 old v24 nf; do timeout 70 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v $?; done
tar czf $OUT/call-a.tgz -C $OUT r
python3 - $F <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    print('%-6s %-45s %-17s %.2f %.3f %s' % (r.get('peer','warpkv'), r.get('variant',''), r['operation'], r['load'], r['gops'], r.get('verified','')))
PY
python3 - $A <<'PY'
import json,sys
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['load'],r['operation']),[]).append((r['tag'],round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, v)
PY
