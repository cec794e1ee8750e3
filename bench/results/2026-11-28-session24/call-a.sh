#!/usr/bin/env bash
# call A (session 24): H64 T=1 inserts, HEAD (a18003b headers) / V1 (weak first home read) / V2
# (+ relaxed lock, weak neighbour reads) via ab-h64.cu, alternated; warpkv-bench static of V2
# (new-bench) and 50e16fd (head-bench: HEAD's H64 kernels) with BGHT and cuco in the same call.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/*-bench $B/ab-h64-* $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-a-ab-h64.jsonl
for v in head v1 v2; do timeout 60 $B/ab-h64-$v $v-fwd >> $J 2>> $R/ab.err; el ab-$v $?; done
F=$R/call-a-static-h64-2p27-peers.jsonl
S="static --backend cuda --map hopscotch-buckets --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^26 --load-factors 0.8,0.9,0.95 --no-statuses"
WARPKV_COMMIT=s24-v2 timeout 90 $B/new-bench $S > $R/h64-new.log 2>&1; el h64-new $?
PEERS="bght" KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 WARPKV_COMMIT=s24-v2 timeout 80 bash $B/run-peers.sh $F > $R/peers-bght.log 2>&1; el bght $?
WARPKV_COMMIT=50e16fd timeout 90 $B/head-bench $S > $R/h64-head.log 2>&1; el h64-head $?
PEERS="cuco" KEY_TILE=1 LFS=0.8,0.9,0.95 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 WARPKV_COMMIT=s24-v2 timeout 110 bash $B/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
for v in v2 v1 head; do [ $(( $(date +%s)-t0 )) -lt 520 ] && { timeout 50 $B/ab-h64-$v $v-bwd >> $J 2>> $R/ab.err; el ab-$v $?; }; done
tar czf $OUT/call-a.tgz -C $OUT r
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'].split('-')[0])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['size'],r['capacity']==r['capacity_after'],r['stashed']))
for k,v in sorted(d.items()): print(k,v)
PY
grep -h "G ops\|WARN\|rror" $R/h64-*.log | cut -c1-140
grep -h "G ops" $R/peers-*.log | cut -c1-120
tail -3 $R/ab.err
