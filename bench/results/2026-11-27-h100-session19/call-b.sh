#!/usr/bin/env bash
# call B (session 19): (1) open addressing at 4 slots per lane: the fast insert's second 16 bytes
# read only when needed (lazy) and a 32-register fast-insert budget, ab2 built 4 ways, alternated;
# (2) cuckoo tile 1 with its complete second pass at 8 lanes per operation vs 1 (ab-cuckoo);
# (3) quadratic C = 2^27 LF 0.8 (cut in call A): 5a49153 vs addf49c, cuco's double hashing beside.
A=$(cd "$(dirname "$0")/../s19a" && pwd)
B=$(cd "$(dirname "$0")" && pwd)
for f in $A/*.xz; do xz -dkf $f; done
for f in $A/bin/*.gz $B/*.gz; do gunzip -kf $f; done
chmod +x $A/new-bench $A/old-bench $A/bin/* $B/ab-* 2>/dev/null
export LD_LIBRARY_PATH=$A/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
el() { echo "$1 rc $2 $(( $(date +%s)-t0 )) s"; }
R=$OUT/r; mkdir -p $R
for v in eager-48 lazy-48 eager-32 lazy-32 lazy-32 eager-32 lazy-48 eager-48; do
  timeout 40 $B/ab-$v >> $R/call-b-ab2.jsonl 2>> $R/ab2.err; el ab-$v $?
done
timeout 150 $B/ab-cuckoo > $R/call-b-ab-cuckoo.jsonl 2> $R/ab-cuckoo.err; el ab-cuckoo $?
F=$R/call-b-static-quadratic.jsonl
S="static --backend cuda --map quadratic --tile 1 --repeats 3 --warmup 1 --out $F --keys 2^26 --load-factors 0.8"
WARPKV_COMMIT=5a49153 timeout 100 $A/new-bench $S > $R/quad-new.log 2>&1; el quad-new $?
WARPKV_COMMIT=addf49c timeout 100 $A/old-bench $S > $R/quad-old.log 2>&1; el quad-old $?
PEERS="cuco" KEY_TILE=1 LFS=0.8 CAPS=27 EXTRA= REPEATS=3 WARMUP=1 CUCO_OPS=insert,find_hit,find_miss WARPKV_COMMIT=5a49153 timeout 100 bash $A/run-peers.sh $F > $R/peers-cuco.log 2>&1; el cuco $?
tar czf $OUT/call-b.tgz -C $OUT r
cat $R/call-b-ab2.jsonl | cut -c1-200
cat $R/call-b-ab-cuckoo.jsonl
grep -h "G ops\|WARN\|rror" $R/*.log | cut -c1-170
grep "insert\|find" $R/peers-cuco.log | grep "dh_" | cut -c1-100
