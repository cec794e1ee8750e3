#!/usr/bin/env bash
# call G (session 30): ab-cache, the default design (arg 8: kv_cache<u64, 8, 8>): 08bca24 (base:
# V39, lock groups in one-bucket designs only) against V42 (lock groups also in the two-bucket
# fast pass while the one-lock gate is on), alternated three times; one_bucket_lru (arg 32) once each.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/ab-cache-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
F=$R/call-g-ab-cache.jsonl
for v in base:8 v42:8 v42:8 base:8 base:8 v42:8 base:32 v42:32; do b=${v%%:*}; a=${v##*:}; AB_VALUE_WORDS=4 timeout 90 $B/ab-cache-$b $b-w$a $a 0.5,0.75,1.0 5 >> $F 2>> $R/ab.err; el ab-$v $?; done
python3 - $F <<'PY'
import json,sys,statistics as st
rows={}
for l in open(sys.argv[1]):
    r=json.loads(l); rows.setdefault((r['load'],r['operation']),{}).setdefault(r['tag'],[]).append((round(r['gkvs'],3),r['wrong_values']))
for k,v in rows.items(): print(k, {t:(st.median([x[0] for x in xs]), [x[0] for x in xs], sum(x[1] for x in xs)) for t,xs in v.items()})
PY
tail -3 $R/ab.err
