#version 460
// Rebuild (growth, cleanup, rehash): one invocation per slot of the old table re-inserts its
// entry into the new table (bindings 0 and 1) when the slot is live; tombstones are dropped.
// counts[ST_FULL] counts entries that found no room (the host then retries with a new seed or
// more room). Runs between batches: the old table is quiescent, every non-empty slot is ready.
#extension GL_GOOGLE_include_directive : require
#include "linear_map_common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 2) readonly buffer old_block { slot_t old_table[]; };
layout(std430, binding = 7) buffer counts_block { uint counts[]; };

void main() {
  const uint i = pc.base + gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  const KEY k = old_table[i].key;
  if (k == EMPTY_KEY || k == ERASED_KEY) return;
  if (op_insert(k, old_table[i].value, false) == ST_FULL) atomicAdd(counts[ST_FULL], 1u);
}
