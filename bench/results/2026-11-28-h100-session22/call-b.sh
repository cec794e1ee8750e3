#!/usr/bin/env bash
# call B (session 22): NEW2 (the mixed batch's sizing sketch made by its partition pass; the
# open-addressing insert as at HEAD) against HEAD (82a19f0) and 9a3dac3: dynamic rows at 1e5
# operations, alternated.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/*-bench 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-b-dynamic-1e5.jsonl
D="dynamic --backend cuda --ops 1e5 --key-range 100,10000,100000,10000000 --repeats 5 --warmup 2 --out $F"
WARPKV_COMMIT=$NEW_COMMIT timeout 60 $B/new-bench $D --map chained-pool,hopscotch,cuckoo > $R/dyn-new-1.log 2>&1; el dyn-new-1 $?
WARPKV_COMMIT=82a19f0 timeout 60 $B/head-bench $D --map chained-pool,hopscotch,cuckoo > $R/dyn-head-1.log 2>&1; el dyn-head-1 $?
WARPKV_COMMIT=9a3dac3 timeout 60 $B/old9a-bench $D --map chained-pool > $R/dyn-9a-1.log 2>&1; el dyn-9a-1 $?
WARPKV_COMMIT=82a19f0 timeout 60 $B/head-bench $D --map chained-pool,hopscotch,cuckoo > $R/dyn-head-2.log 2>&1; el dyn-head-2 $?
WARPKV_COMMIT=$NEW_COMMIT timeout 60 $B/new-bench $D --map chained-pool,hopscotch,cuckoo > $R/dyn-new-2.log 2>&1; el dyn-new-2 $?
WARPKV_COMMIT=9a3dac3 timeout 60 $B/old9a-bench $D --map chained-pool > $R/dyn-9a-2.log 2>&1; el dyn-9a-2 $?
# occupancy experiment: the fast insert of linear_map<u32,u32,1> with resident blocks capped by dynamic shared memory
X=$R/call-b-occupancy-cap.jsonl
[ -x $B/ab-cap ] && for round in 1 2; do
  for s in 0 45056 56320 71680; do
    if [ $s = 0 ]; then timeout 30 $B/ab-cap 26 smem0 >> $X 2>> $R/ab-cap.err; else WARPKV_EXP_SMEM=$s timeout 30 $B/ab-cap 26 smem$s >> $X 2>> $R/ab-cap.err; fi
  done
done
el ab-cap $?
cat $X
tar czf $OUT/call-b.tgz -C $OUT r
python3 - $F <<'PY'
import json,sys,collections
rows=collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    r=json.loads(l)
    rows[(r['map'],r['mix'],r['key_range'])][r['commit']].append(round(r['gops'],3))
for k,v in sorted(rows.items(), key=lambda kv: str(kv[0])): print(k, dict(v))
PY
