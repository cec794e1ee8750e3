#!/usr/bin/env bash
# call I (session 26): 00ecaca's H64 (head) / V23 (the complete insert scans b+1 .. b+15 once: the
# locked path skips claim_empty when place_external saw neither an empty slot nor a tomb)
# alternated via ab-h64m; per-phase
# profiles profhead / prof23.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s); el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-i-ab-h64m.jsonl
for v in head v23 v23 head head v23; do timeout 60 $B/ab-h64m-$v $v 0.8,0.9,0.95 3 >> $J 2>> $R/ab.err; el ab-$v $?; done
for v in profhead prof23; do timeout 60 $B/ab-h64-$v $v 0.9,0.95 2 > $R/call-i-$v.jsonl 2>> $R/ab.err; el $v $?; done
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),round(r['miss_gops'],3),r['wrong_values'],r['stashed'],r['size']==r['n'],r['capacity']==r['capacity_after']))
for k,v in sorted(d.items()): print(k,v)
PY
for v in profhead prof23; do python3 - $R/call-i-$v.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('experiment')!='h64-prof': print(sys.argv[1][-14:], {k:r[k] for k in ('load_factor','insert_gops','stashed')}); continue
    tot=r['complete_upsert'][1] or 1
    print(sys.argv[1][-14:], 'LF',r['load_factor'], ' '.join('%s %d/%.1f%%/%dk' % (k[:14], v[0], 100.0*v[1]/tot, v[1]/max(v[0],1)/1000) for k,v in r.items() if isinstance(v,list)))
PY
done
tail -3 $R/ab.err
