#!/usr/bin/env bash
# call C (session 28): ab-cache of f0b1109 (head), V33 (lazy eviction ranks, no zero expiry store
# into an empty slot: the change being landed) and V30a (V33, and the fast write pass holding the
# key's first bucket's lock alone while the write stays in that bucket) alternated three times
# at dim 8, HierarchicalKV ae24eec beside (dim 8) in the same call.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/ab-cache-* $B/peers/bin/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-c-cache-hkv.jsonl
PEERS=hkv HKV_DIMS=8 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$(cat $B/commit) timeout 150 bash $B/peers/run-peers.sh $F > $R/peers-hkv.log 2>&1; el hkv $?
tail -3 $R/peers-hkv.log
A=$R/call-c-ab-cache.jsonl
for v in head v33 v30a v30a v33 head head v33 v30a; do AB_VALUE_WORDS=4 timeout 60 $B/ab-cache-$v $v 8 0.5,0.75,1.0 5 >> $A 2>> $R/ab.err; el ab-$v $?; done
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
