#!/usr/bin/env bash
# call A (session 25; prepared in session 24 as call H): where the complete insert pass spends its time: V9 = d11c6d2 with clock64
# sums per phase of the complete insert (lane 0; an experiment build), LF 0.9 / 0.95, two batches.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/ab-h64-*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
R=$OUT/r; mkdir -p $R
timeout 60 $B/ab-h64-prof prof 0.8,0.9,0.95 2 > $R/call-h-prof.jsonl 2> $R/prof.err; echo rc $?
timeout 60 $B/ab-h64-head head 0.8,0.9,0.95 3 > $R/call-h-ab-head.jsonl 2>> $R/prof.err; echo rc $?
tar czf $OUT/call-h.tgz -C $OUT r
python3 - $R/call-h-prof.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get('experiment')!='h64-prof': print({k:r[k] for k in ('load_factor','insert_gops','stashed')}); continue
    tot=r['complete_upsert'][1] or 1
    print('LF',r['load_factor'],'complete calls',r['complete_upsert'][0])
    for k,v in r.items():
        if isinstance(v,list): print('  %-28s calls %10d  cycles %6.1f%%  avg %10.0f' % (k, v[0], 100.0*v[1]/tot, v[1]/max(v[0],1)))
PY
