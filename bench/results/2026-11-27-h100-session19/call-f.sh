#!/usr/bin/env bash
# call F (session 19): where cuckoo's complete insert (write_evicting) spends its cycles (ab-cuckoo-prof.cu, exp-call-f.patch)
B=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 120 $B/ab-prof | tee $OUT/call-f-prof.jsonl
