#!/usr/bin/env bash
# call B (session 25): HEAD (07b00d0) / V10 (slow paths load whole buckets) alternated via ab-h64;
# the per-phase profile of V9 (HEAD + clock64) and V10 + clock64 (prof10).
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-h64-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
R=$OUT/r; mkdir -p $R
J=$R/call-b-ab-h64.jsonl
for v in head v10 v10 head; do timeout 50 $B/ab-h64-$v $v 0.5,0.8,0.9,0.95 3 >> $J 2>> $R/ab.err; echo ab-$v rc $?; done
timeout 60 $B/ab-h64-prof prof9 0.9,0.95 2 > $R/call-b-prof9.jsonl 2>> $R/ab.err; echo rc $?
timeout 60 $B/ab-h64-prof10 prof10 0.9,0.95 2 > $R/call-b-prof10.jsonl 2>> $R/ab.err; echo rc $?
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['size'],r['capacity']==r['capacity_after'],r['stashed']))
for k,v in sorted(d.items()): print(k,v)
PY
for f in $R/call-b-prof9.jsonl $R/call-b-prof10.jsonl; do python3 - $f <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('experiment')!='h64-prof': print(sys.argv[1][-12:], {k:r[k] for k in ('load_factor','insert_gops','stashed')}); continue
    tot=r['complete_upsert'][1] or 1
    print(sys.argv[1][-12:], 'LF',r['load_factor'], ' '.join('%s %d/%.1f%%/%dk' % (k[:14], v[0], 100.0*v[1]/tot, v[1]/max(v[0],1)/1000) for k,v in r.items() if isinstance(v,list)))
PY
done
tail -3 $R/ab.err
