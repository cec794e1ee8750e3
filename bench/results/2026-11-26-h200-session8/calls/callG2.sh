#!/usr/bin/env bash
# Session 8, device call G2 (commit 7ee1860): the YCSB table against the CPU baseline and a real
# memcached (1.6.18, carried) on the GPU machine's 16 cores, A B C D F at 10% and 50% capacity.
set -u
D=$PWD/.carry/c10; O=${OUT:-/tmp/out}; mkdir -p "$O/all"
mc=$D/memcached/root
export LD_LIBRARY_PATH=$D/lib:$mc/usr/lib/x86_64-linux-gnu:$mc/lib/x86_64-linux-gnu WARPKV_MEMCACHED=$mc/usr/bin/memcached
export WARPKV_COMMIT=7ee1860
pack() { tar czf "$O/all.tgz" -C "$O" all; }
trap pack EXIT
timeout 520 $D/warpkv-bench cache --backend cuda --ops 2e6 --workloads A,B,C,D,F --distributions zipfian \
  --capacity 0.1,0.5 --bucket-widths 8 --repeats 3 --warmup 1 --baseline --memcached auto \
  --out "$O/all/ycsb-memcached.jsonl" >/dev/null 2>"$O/all/ycsb-memcached.log"
echo "memcached table rc=$? (${SECONDS}s)"; grep -E "^ycsb|refused|verif" "$O/all/ycsb-memcached.log" | head -60
