#version 460
// One batch of map operations, one invocation per operation: op i is ops[i] (or the push
// constant uniform_op) on keys[i], with values[i] for inserts; statuses[i] receives its status,
// values_out[i] the value a find read (0 on a miss), counts[s] how many operations got status s.
#extension GL_GOOGLE_include_directive : require
#include "linear_map_common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 2) readonly buffer ops_block { uint ops[]; };
layout(std430, binding = 3) readonly buffer keys_block { KEY keys[]; };
layout(std430, binding = 4) readonly buffer values_block { uint values[]; };
layout(std430, binding = 5) buffer statuses_block { uint statuses[]; };
layout(std430, binding = 6) writeonly buffer values_out_block { uint values_out[]; };
layout(std430, binding = 7) buffer counts_block { uint counts[]; };

shared uint group_counts[ST_COUNT];

void main() {
  const uint t = gl_LocalInvocationIndex;
  if (t < ST_COUNT) group_counts[t] = 0u;
  barrier();

  const uint i = pc.base + gl_GlobalInvocationID.x;
  if (i < pc.n && ((pc.flags & FLAG_ONLY_FULL) == 0u || statuses[i] == ST_FULL || statuses[i] == ST_RETRY)) {
    const uint o = pc.uniform_op == OP_PER_ELEMENT ? ops[i] : pc.uniform_op;
    const KEY k = keys[i];
    uint st = ST_INVALID_KEY;  // also for an op code outside warpkv::op: refused, never guessed
    uint found_value = 0u;
    if (k != EMPTY_KEY && k != ERASED_KEY) {
      if (o == OP_INSERT || o == OP_INSERT_OR_ASSIGN) {
        st = op_insert(k, values[i], o == OP_INSERT_OR_ASSIGN);
      } else if (o == OP_FIND || o == OP_CONTAINS) {
        st = op_find(k, found_value);
      } else if (o == OP_ERASE) {
        st = op_erase(k);
      }
    }
    statuses[i] = st;
    if ((pc.flags & FLAG_WRITE_VALUES) != 0u && (o == OP_FIND || o == OP_CONTAINS)) values_out[i] = found_value;
    atomicAdd(group_counts[st], 1u);
  }

  barrier();
  if (t < ST_COUNT && group_counts[t] != 0u) atomicAdd(counts[t], group_counts[t]);
}
