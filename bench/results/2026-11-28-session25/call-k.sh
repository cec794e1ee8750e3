#!/usr/bin/env bash
# call K (session 25): 7d7c9db (head) / V13 (displacement's plan stops at the first bucket that is
# not good: good buckets form a prefix) alternated via ab-h64; per-phase profiles profhead / prof13.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-h64-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
R=$OUT/r; mkdir -p $R
J=$R/call-k-ab-h64.jsonl
for v in head v13 v13 head head v13; do timeout 60 $B/ab-h64-$v $v 0.8,0.9,0.95 3 >> $J 2>> $R/ab.err; echo ab-$v rc $?; done
timeout 60 $B/ab-h64-profhead profhead 0.9,0.95 2 > $R/call-k-profhead.jsonl 2>> $R/ab.err; echo rc $?
timeout 60 $B/ab-h64-prof13 prof13 0.9,0.95 2 > $R/call-k-prof13.jsonl 2>> $R/ab.err; echo rc $?
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['stashed'],r['capacity']==r['capacity_after']))
for k,v in sorted(d.items()): print(k,v)
PY
for f in $R/call-k-profhead.jsonl $R/call-k-prof13.jsonl; do python3 - $f <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('experiment')!='h64-prof': print(sys.argv[1][-14:], {k:r[k] for k in ('load_factor','insert_gops','stashed')}); continue
    tot=r['complete_upsert'][1] or 1
    print(sys.argv[1][-14:], 'LF',r['load_factor'], ' '.join('%s %d/%.1f%%/%dk' % (k[:14], v[0], 100.0*v[1]/tot, v[1]/max(v[0],1)/1000) for k,v in r.items() if isinstance(v,list)))
PY
done
tail -3 $R/ab.err
