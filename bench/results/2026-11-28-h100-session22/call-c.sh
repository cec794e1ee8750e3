#!/usr/bin/env bash
# call C (session 22): NEW3 (the sizing sketch's registers in the map's counter buffer) against
# NEW2 (3a943b8: the sketch in its own buffer) and 9a3dac3: dynamic rows at 1e5 operations,
# alternated twice.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/*-bench 2>/dev/null
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-c-dynamic-1e5.jsonl
D="dynamic --backend cuda --ops 1e5 --key-range 100,10000,100000,10000000 --repeats 5 --warmup 2 --out $F"
for round in 1 2; do
  WARPKV_COMMIT=$NEW_COMMIT timeout 60 $B/new3-bench $D --map chained-pool,hopscotch,cuckoo > $R/dyn-new3-$round.log 2>&1; el dyn-new3-$round $?
  WARPKV_COMMIT=3a943b8 timeout 60 $B/new2-bench $D --map chained-pool,hopscotch,cuckoo > $R/dyn-new2-$round.log 2>&1; el dyn-new2-$round $?
  WARPKV_COMMIT=9a3dac3 timeout 60 $B/old9a-bench $D --map chained-pool > $R/dyn-9a-$round.log 2>&1; el dyn-9a-$round $?
done
tar czf $OUT/call-c.tgz -C $OUT r
python3 - $F <<'PY'
import json,sys,collections
rows=collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    r=json.loads(l)
    rows[(r['map'],r['mix'],r['key_range'])][r['commit']].append(round(r['gops'],3))
for k,v in sorted(rows.items(), key=lambda kv: str(kv[0])): print(k, dict(v))
PY
