#!/usr/bin/env bash
# call H (session 27): HKV's other benchmark setting, dim 32 (128-byte values): our HKV driver
# (HKV ae24eec) and ab-cache of the landed cache (kv_cache<u64, 8, 8>, AB_VALUE_WORDS=16) on the
# same workload in one call; ab-cache at 32-byte values once more beside.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/peers/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/ab-cache-* $B/peers/bin/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-h-cache-hkv-dim32.jsonl
PEERS=hkv HKV_DIMS=32 REPEATS=5 WARMUP=2 WARPKV_COMMIT=$(cat $B/commit) timeout 200 bash $B/peers/run-peers.sh $F > $R/peers-hkv.log 2>&1; el hkv $?
for r in 1 2; do AB_VALUE_WORDS=16 timeout 80 $B/ab-cache-new new-dim32 8 0.5,0.75,1.0 5 >> $F 2>> $R/ab.err; el ab-dim32 $?; done
AB_VALUE_WORDS=4 timeout 60 $B/ab-cache-new new-dim8 8 0.5,0.75,1.0 5 >> $F 2>> $R/ab.err; el ab-dim8 $?
python3 - $F <<'PY'
import json,sys
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l)
    who = r.get('peer', r.get('tag'))
    g = r.get('gops', r.get('gkvs'))
    var = r.get('variant','')
    rows.setdefault((r['load'],r['operation']),[]).append((who+(':'+var[-20:] if var else ''), round(g,3), r.get('verified', r.get('wrong_values'))))
for k,v in rows.items(): print(k, v)
PY
