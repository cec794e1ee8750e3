#version 460
// One batch of map operations: op i is ops[i] (or the push constant uniform_op) on keys[i], with
// values[i] for inserts; statuses[i] receives its status, values_out[i] the value a find read (0
// on a miss), counts[s] how many operations got status s.
// Default: one invocation per operation (linear_map_common.glsl). Compiled with
// -DSUBGROUP_PROBING: the invocations of a subgroup serve their operations in turn, probing
// together (linear_map_subgroup.glsl); same statuses, same table protocol.
#extension GL_GOOGLE_include_directive : require
#include "linear_map_common.glsl"
#ifdef SUBGROUP_PROBING
#include "linear_map_subgroup.glsl"
#endif
#ifdef SUBGROUP_UNIFORM_CONTROL_FLOW
// Built where the device offers VK_KHR_shader_subgroup_uniform_control_flow (the host enables it):
// the lanes of a subgroup that enter a construct together in subgroup-uniform control flow are
// together again at its end, which the "one lane acts, then all shuffle from it" steps rely on.
#extension GL_EXT_subgroup_uniform_control_flow : require
#define MAIN_ATTRIBUTES [[subgroup_uniform_control_flow]]
#else
#define MAIN_ATTRIBUTES
#endif

layout(local_size_x = 256) in;

layout(std430, binding = 2) readonly buffer ops_block { uint ops[]; };
layout(std430, binding = 3) readonly buffer keys_block { KEY keys[]; };
layout(std430, binding = 4) readonly buffer values_block { uint values[]; };
layout(std430, binding = 5) buffer statuses_block { uint statuses[]; };
layout(std430, binding = 6) writeonly buffer values_out_block { uint values_out[]; };
layout(std430, binding = 7) buffer counts_block { uint counts[]; };

shared uint group_counts[ST_COUNT];

void main() MAIN_ATTRIBUTES {
  const uint t = gl_LocalInvocationIndex;
  if (t < ST_COUNT) group_counts[t] = 0u;
  barrier();

  // Every invocation stays to the end (no early return): the subgroup variant needs its lanes.
  const uint i = pc.base + gl_GlobalInvocationID.x;
  const bool mine =
      i < pc.n && ((pc.flags & FLAG_ONLY_FULL) == 0u || statuses[i] == ST_FULL || statuses[i] == ST_RETRY);
  uint o = 0u;
  KEY k = EMPTY_KEY;
  uint v = 0u;
  bool valid = false;  // an op code outside warpkv::op or a sentinel key: invalid_key, never guessed
  if (mine) {
    o = pc.uniform_op == OP_PER_ELEMENT ? ops[i] : pc.uniform_op;
    k = keys[i];
    const bool insert = o == OP_INSERT || o == OP_INSERT_OR_ASSIGN;
    if (insert) v = values[i];  // values is bound for insert batches only
    valid = k != EMPTY_KEY && k != ERASED_KEY && (insert || o == OP_FIND || o == OP_CONTAINS || o == OP_ERASE);
  }
  uint st = ST_INVALID_KEY;
  uint found_value = 0u;

#ifdef SUBGROUP_PROBING
  bool waiting = mine && valid;
  for (;;) {  // subgroup-uniform: one leader's operation per round, lowest lane first
    const uvec4 todo = subgroupBallot(waiting);
    if (todo == uvec4(0u)) break;
    const uint leader = subgroupBallotFindLSB(todo);
    uint value_read;
    const uint r =
        coop_execute(subgroupShuffle(o, leader), shuffle_key(k, leader), subgroupShuffle(v, leader), value_read);
    if (gl_SubgroupInvocationID == leader) {
      st = r;
      found_value = value_read;
      waiting = false;
    }
  }
#else
  if (mine && valid) {
    if (o == OP_INSERT || o == OP_INSERT_OR_ASSIGN) {
      st = op_insert(k, v, o == OP_INSERT_OR_ASSIGN);
    } else if (o == OP_FIND || o == OP_CONTAINS) {
      st = op_find(k, found_value);
    } else {
      st = op_erase(k);
    }
  }
#endif

  if (mine) {
    statuses[i] = st;
    if ((pc.flags & FLAG_WRITE_VALUES) != 0u && (o == OP_FIND || o == OP_CONTAINS)) values_out[i] = found_value;
    atomicAdd(group_counts[st], 1u);
  }

  barrier();
  if (t < ST_COUNT && group_counts[t] != 0u) atomicAdd(counts[t], group_counts[t]);
}
