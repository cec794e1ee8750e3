#!/usr/bin/env bash
# call C (session 24): H64 T=1, V2 (656220f) / V4 (b+1 loaded with the lock CAS) / V5 (V4 with a
# relaxed unlock: unsafe, prices the fence) via ab-h64.cu, alternated; warpkv-bench static of V4
# and V2 with BGHT and cuco (all variants) in the same call.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/*-bench $B/ab-h64-* $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-c-ab-h64.jsonl
for v in v2 v4 v5 v5 v4 v2; do timeout 50 $B/ab-h64-$v $v >> $J 2>> $R/ab.err; el ab-$v $?; done
F=$R/call-c-static-h64-2p27-peers.jsonl
S="static --backend cuda --map hopscotch-buckets --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^26 --load-factors 0.8,0.9,0.95 --no-statuses"
WARPKV_COMMIT=s24-v4 timeout 90 $B/v4-bench $S > $R/h64-v4.log 2>&1; el h64-v4 $?
PEERS="cuco" KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 EXTRA= CUCO_OPS=insert,find_hit,find_miss REPEATS=3 WARMUP=1 WARPKV_COMMIT=s24-v4 timeout 150 bash $B/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
WARPKV_COMMIT=656220f timeout 90 $B/v2-bench $S > $R/h64-v2.log 2>&1; el h64-v2 $?
PEERS="bght" KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 WARPKV_COMMIT=s24-v4 timeout 80 bash $B/run-peers.sh $F > $R/peers-bght.log 2>&1; el bght $?
tar czf $OUT/call-c.tgz -C $OUT r
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['size'],r['capacity']==r['capacity_after'],r['stashed']))
for k,v in sorted(d.items()): print(k,v)
PY
python3 - $F <<'PY'
import json,sys,collections
rows=collections.defaultdict(dict)
for l in open(sys.argv[1]):
    r=json.loads(l)
    who=(r['peer']+':'+r.get('variant','')) if 'peer' in r else r.get('commit')
    rows[(r.get('load_factor'),r.get('operation'))][who]=(round(r['gops'],2), r.get('verified', True))
for k,v in sorted(rows.items(), key=lambda kv: str(kv[0])):
    if k[1] in ('insert','find_hit','find_miss'):
        print(k, {w:g for w,(g,ok) in v.items() if ':' not in w}, sorted(((g,w) for w,(g,ok) in v.items() if ':' in w and ok is True), reverse=True)[:3])
PY
tail -3 $R/ab.err
