#!/usr/bin/env bash
# call E (session 24): H64 T=1, V2 (d11c6d2) against V6 (displacement's plan from a snapshot of the
# headers, read once per attempt), alternated; then ncu kernel durations of V6 at LF 0.9 / 0.95.
B=$(cd "$(dirname "$0")" && pwd)
for f in $B/*.xz; do xz -dkf $f; done
chmod +x $B/ab-h64-*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
J=$R/call-e-ab-h64.jsonl
for v in v2 v6 v6 v2 v2 v6; do timeout 50 $B/ab-h64-$v $v 0.5,0.8,0.9,0.95 6 >> $J 2>> $R/ab.err; el ab-$v $?; done
timeout 120 ncu --kernel-name-base mangled --metrics gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread --csv --page details $B/ab-h64-v6 times 0.9,0.95 2 > $R/ncu-times-v6.csv 2> $R/ncu-times.err; el times $?
tar czf $OUT/call-e.tgz -C $OUT r
python3 - $J <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); d[(r['load_factor'],r['tag'])].append((round(r['insert_gops'],3),round(r['find_gops'],3),r['wrong_values'],r['size'],r['capacity']==r['capacity_after'],r['stashed']))
for k,v in sorted(d.items()): print(k,v)
PY
python3 - $R/ncu-times-v6.csv <<'PY'
import csv,sys,re
rows=list(csv.reader(open(sys.argv[1]))); hdr=None
for r in rows:
    if 'Kernel Name' in r: hdr=r; continue
    if not hdr or len(r)!=len(hdr): continue
    d=dict(zip(hdr,r))
    if d['Metric Name'] in ('gpu__time_duration.sum','launch__grid_size'): print(d['ID'], d['Metric Name'], d['Metric Value'], re.sub(r'_ZN6warpkv6detail','',d['Kernel Name'])[:70])
PY
