#!/usr/bin/env bash
# call F (session 28): warpkv-bench of bb2b2cf (commit file: V34 landed) `cache --hkv --no-ycsb`
# beside HierarchicalKV ae24eec (dim 8) in one file; then ab-cache of 58b3714 (V33) / V34
# alternated twice more (finds at λ 0.75 were 3-5 % lower with the one-lock variants in calls D
# and E, where no read code changed).
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/warpkv-bench $B/peers/bin/* $B/ab-cache-*
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
C=$(cat $B/commit)
F=$R/call-f-cache-hkv.jsonl
PEERS=hkv HKV_DIMS=8 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$C timeout 150 bash $B/peers/run-peers.sh $F > $R/peers-hkv.log 2>&1; el hkv $?
WARPKV_COMMIT=$C timeout 150 $B/warpkv-bench cache --backend cuda --hkv --no-ycsb --out $F > $R/cache.log 2>&1; el cache $?
A=$R/call-f-ab-cache.jsonl
for v in v34 v33 v33 v34; do AB_VALUE_WORDS=4 timeout 60 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v $?; done
python3 - $F <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    print('%-6s %-45s %-17s %.2f %.3f %s' % (r.get('peer','warpkv'), r.get('variant',r.get('sync','')+'/'+r.get('layout','')), r['operation'], r['load'], r['gops'], r.get('verified','')))
PY
python3 - $A <<'PY'
import json,sys
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['load'],r['operation']),[]).append((r['tag'],round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, v)
PY
