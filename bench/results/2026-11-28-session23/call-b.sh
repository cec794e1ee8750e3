#!/usr/bin/env bash
# call B (session 23): the thread-per-operation launch of the one-lane open-addressing kernels,
# block size (256 / 128) x operations per thread (1 / 2 / 4), warpkv's real kernels built from an
# experimental copy of core/launcher.hpp (ab-ipt.cu), alternated (forward then backward); cuco
# lp_cg1 / lp_cg2 and HEAD's warpkv-bench on the bench's keys in the same call.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
for f in $B/bin/*.gz; do gunzip -kf $f; done
chmod +x $B/*-bench $B/ab-ipt-* $B/bin/* 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-b-tpi-launch.jsonl
V="256-1 128-1 256-2 128-2 256-4 128-4"
for v in $V; do timeout 40 $B/ab-ipt-$v 26 fwd >> $J 2>> $R/ab-ipt.err; el $v $?; done
for v in $(echo $V | tr ' ' '\n' | tac); do timeout 40 $B/ab-ipt-$v 26 bwd >> $J 2>> $R/ab-ipt.err; el $v $?; done
F=$R/call-b-static-oa-2p26-cuco.jsonl
S="static --backend cuda --map linear,quadratic --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^25 --load-factors 0.5,0.8 --no-statuses"
WARPKV_COMMIT=c4d7d47 timeout 90 $B/head-bench $S > $R/oa-head-1.log 2>&1; el oa-head-1 $?
PEERS="cuco" KEY_TILE=1 LFS=0.5,0.8 CAPS=26 EXTRA= CUCO_OPS=insert,find_hit CUCO_VARIANTS=lp_cg1,lp_cg2,dh_cg1,dh_cg2,dh_cg4 REPEATS=3 WARMUP=1 WARPKV_COMMIT=c4d7d47 timeout 60 bash $B/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
tar czf $OUT/call-b.tgz -C $OUT r
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['map'],r['load_factor'],r['block'],r['ops_per_thread'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['size']==r['n']))
for k,v in sorted(d.items()): print(k,v)
PY
grep -h "G ops\|WARN\|rror" $R/oa-*.log | cut -c1-170
grep "G ops" $R/peers-cuco.log | cut -c1-110
