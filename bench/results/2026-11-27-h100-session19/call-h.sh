#!/usr/bin/env bash
# call H (session 19): cuckoo plan_chain's look-ahead without run-time-indexed arrays (NEW, ab-cuckoo-budget.cu
# built on the new tree) against 0358619's (OLD: call C's slow-64 binary, the same source), alternated.
B=$(cd "$(dirname "$0")" && pwd)
chmod +x $B/ab-*
for v in old new old new old new; do timeout 40 $B/ab-$v | sed "s/\"variant\":\"[^\"]*\"/\"variant\":\"$v\"/" | tee -a $OUT/call-h-ab.jsonl; done
