#version 460
// retrieve_all: one invocation per slot appends each live entry to keys_out/values_out;
// counts[0] is the running count (the host zeroes it). Runs between batches.
#extension GL_GOOGLE_include_directive : require
#include "linear_map_common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 3) writeonly buffer keys_out_block { KEY keys_out[]; };
layout(std430, binding = 6) writeonly buffer values_out_block { uint values_out[]; };
layout(std430, binding = 7) buffer counts_block { uint counts[]; };

void main() {
  const uint i = pc.base + gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  const KEY k = slots.table[i].key;
  if (k == EMPTY_KEY || k == ERASED_KEY) return;
  const uint at = atomicAdd(counts[0], 1u);
  keys_out[at] = k;
  values_out[at] = slots.table[i].value;
}
