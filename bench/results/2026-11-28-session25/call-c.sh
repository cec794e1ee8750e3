#!/usr/bin/env bash
# call C (session 25): V10 / V11 (displacement's plan from a free-slot pre-scan of b+16..b+63)
# alternated via ab-h64; per-phase profiles prof10 / prof11.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-h64-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
R=$OUT/r; mkdir -p $R
J=$R/call-c-ab-h64.jsonl
for v in v10 v11 v11 v10; do timeout 50 $B/ab-h64-$v $v 0.8,0.9,0.95 3 >> $J 2>> $R/ab.err; echo ab-$v rc $?; done
timeout 60 $B/ab-h64-prof10 prof10 0.9,0.95 2 > $R/call-c-prof10.jsonl 2>> $R/ab.err; echo rc $?
timeout 60 $B/ab-h64-prof11 prof11 0.9,0.95 2 > $R/call-c-prof11.jsonl 2>> $R/ab.err; echo rc $?
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['size'],r['capacity']==r['capacity_after'],r['stashed']))
for k,v in sorted(d.items()): print(k,v)
PY
for f in $R/call-c-prof10.jsonl $R/call-c-prof11.jsonl; do python3 - $f <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('experiment')!='h64-prof': print(sys.argv[1][-12:], {k:r[k] for k in ('load_factor','insert_gops','stashed')}); continue
    tot=r['complete_upsert'][1] or 1
    print(sys.argv[1][-12:], 'LF',r['load_factor'], ' '.join('%s %d/%.1f%%/%dk' % (k[:14], v[0], 100.0*v[1]/tot, v[1]/max(v[0],1)/1000) for k,v in r.items() if isinstance(v,list)))
PY
done
tail -3 $R/ab.err
