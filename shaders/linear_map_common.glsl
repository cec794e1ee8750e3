// Shared by the linear_map compute shaders: slot layout, sentinels, hash, statuses and the four
// operations on one key by one invocation. The protocol and its linearization points are those
// of the CUDA open_addressing_map (docs/design/open_addressing.md); the Vulkan memory-model
// argument is in docs/design/vulkan.md.
//
// Compiled with -DKEY_BITS=32 or -DKEY_BITS=64 (64-bit keys need shaderBufferInt64Atomics).
// Every access to a slot or a ready word while operations run is an atomic with explicit
// device scope and semantics (GL_KHR_memory_scope_semantics, the Vulkan memory model).
#extension GL_KHR_memory_scope_semantics : require
#pragma use_vulkan_memory_model

#if KEY_BITS == 64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#define KEY uint64_t
#define EMPTY_KEY 0xFFFFFFFFFFFFFFFFul
#define ERASED_KEY 0xFFFFFFFFFFFFFFFEul
struct slot_t {
  uint64_t key;
  uint value;
  uint pad;  // std430 rounds the struct to its 8-byte alignment anyway; named so the host mirrors it
};
#else
#define KEY uint
#define EMPTY_KEY 0xFFFFFFFFu
#define ERASED_KEY 0xFFFFFFFEu
struct slot_t {
  uint key;
  uint value;
};
#endif

// warpkv::status and warpkv::op (core/status.hpp).
const uint ST_INSERTED = 0u;
const uint ST_ASSIGNED = 1u;
const uint ST_FOUND = 2u;
const uint ST_NOT_FOUND = 3u;
const uint ST_ERASED = 4u;
const uint ST_FULL = 5u;
const uint ST_INVALID_KEY = 6u;
// Internal, never reported: an insert met a pending claim of its key for pc.pending_waits
// rounds. The host re-runs it in another dispatch (after this one ended, so the claim is
// published). Vulkan promises no forward progress between invocations of one subgroup: on
// NVIDIA a waiter could spin while the claimer, parked at a reconvergence point, never publishes.
const uint ST_RETRY = 7u;
const uint ST_COUNT = 8u;  // size of the counts buffer (7 statuses, one spare)

const uint OP_INSERT = 0u;
const uint OP_INSERT_OR_ASSIGN = 1u;
const uint OP_FIND = 2u;
const uint OP_ERASE = 3u;
const uint OP_CONTAINS = 4u;
const uint OP_PER_ELEMENT = 0xFFu;  // push constant: read the op code of each element from ops[]

const uint FLAG_ONLY_FULL = 1u;     // run only the elements whose status is ST_FULL or ST_RETRY (re-runs)
const uint FLAG_WRITE_VALUES = 2u;  // finds write values_out (bound)

// One push-constant block for every shader (same layout on the host: detail/pipeline.hpp).
layout(push_constant) uniform params_t {
  uint n;              // elements of the batch (or slots of the old table for reinsert)
  uint base;           // first element of this dispatch (large batches take several dispatches)
  uint capacity_mask;  // capacity - 1, capacity a power of two
  uint max_probe;      // slots an operation may probe before it reports full
  uint seed_lo;        // hash seed mix (low and high words; 32-bit keys use seed_lo only)
  uint seed_hi;
  uint uniform_op;     // an op code for the whole batch, or OP_PER_ELEMENT
  uint flags;          // FLAG_ONLY_FULL | FLAG_WRITE_VALUES
  uint pending_waits;  // rounds an insert re-reads a slot whose claim of its key is pending
} pc;

#define RELAXED gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed
#ifndef RELAXED_ONLY
// The orders of docs/design/vulkan.md: device scope, buffer storage class.
#define ACQUIRE gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire
#define RELEASE gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease
#define CAS_ORDER gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease, \
                  gl_StorageSemanticsBuffer, gl_SemanticsAcquire
#define LOAD_KEY(mem) atomicLoad(mem, RELAXED)
#define LOAD_WORD(mem, ORDER) atomicLoad(mem, ORDER)
#define STORE_WORD(mem, v, ORDER) atomicStore(mem, v, ORDER)
#else
// Mesa's llvmpipe (lavapipe, the CPU driver of CI) up to at least 22.3 stops executing an
// invocation group when it meets a memory barrier (or an atomic with acquire/release semantics,
// which it lowers to one) in non-uniform control flow, silently dropping the rest of the
// dispatch. Its atomics are sequentially consistent x86 read-modify-writes whatever the
// semantics say, so this variant (chosen at run time for llvmpipe only) asks for relaxed order
// and reads and writes through read-modify-writes, which llvmpipe can neither drop nor reorder.
#define ACQUIRE RELAXED
#define RELEASE RELAXED
#define CAS_ORDER RELAXED, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed
#define LOAD_KEY(mem) atomicAdd(mem, KEY(0), RELAXED)
#define LOAD_WORD(mem, ORDER) atomicAdd(mem, 0u, RELAXED)
#define STORE_WORD(mem, v, ORDER) atomicExchange(mem, v, RELAXED)
#endif

uint fmix32(uint h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

#if KEY_BITS == 64
uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdul;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ul;
  k ^= k >> 33;
  return k;
}
// warpkv::hash_bits<uint64_t>: the host passes fmix64(seed * golden ratio) as the seed mix.
uint home_slot(KEY k) {
  const uint64_t mix = (uint64_t(pc.seed_hi) << 32) | uint64_t(pc.seed_lo);
  return uint(fmix64(k ^ mix)) & pc.capacity_mask;
}
#else
// warpkv::hash_bits<uint32_t>: the host passes uint32(fmix64(seed)) as the seed mix.
uint home_slot(KEY k) { return fmix32(k ^ pc.seed_lo) & pc.capacity_mask; }
#endif

// The table every shader works on: binding 0 the slots, binding 1 the ready bitmap (bit i: slot
// i's first value is published).
layout(std430, binding = 0) buffer slots_block { slot_t table[]; } slots;
layout(std430, binding = 1) buffer ready_block { uint bits[]; } ready;

bool is_ready(uint s) {
  return (LOAD_WORD(ready.bits[s >> 5], ACQUIRE) & (1u << (s & 31u))) != 0u;
}

// find: the first slot in probe order that holds k or is empty decides; never writes.
uint op_find(KEY k, out uint value) {
  value = 0u;
  uint s = home_slot(k);
  for (uint p = 0u; p < pc.max_probe; ++p) {
    const KEY cur = LOAD_KEY(slots.table[s].key);
    if (cur == EMPTY_KEY) return ST_NOT_FOUND;
    if (cur == k) {
      if (!is_ready(s)) return ST_NOT_FOUND;  // pending: its insert has not taken effect
      value = LOAD_WORD(slots.table[s].value, ACQUIRE);
      return ST_FOUND;
    }
    s = (s + 1u) & pc.capacity_mask;
  }
  return ST_NOT_FOUND;  // invariant P: a stored key lies within max_probe of its home
}

// erase: tombstone a live k by CAS of its key; a pending k is absent.
uint op_erase(KEY k) {
  uint s = home_slot(k);
  for (uint p = 0u; p < pc.max_probe; ++p) {
    const KEY cur = LOAD_KEY(slots.table[s].key);
    if (cur == EMPTY_KEY) return ST_NOT_FOUND;
    if (cur == k) {
      if (!is_ready(s)) return ST_NOT_FOUND;
      const KEY prev = atomicCompSwap(slots.table[s].key, k, ERASED_KEY, CAS_ORDER);
      return prev == k ? ST_ERASED : ST_NOT_FOUND;
    }
    s = (s + 1u) & pc.capacity_mask;
  }
  return ST_NOT_FOUND;
}

// insert / insert_or_assign. Claim: CAS empty->k; publish: value store, then the ready bit
// (release). A pending k is waited for by re-reading the same slot, at most pc.pending_waits
// times; then the insert returns ST_RETRY and the host runs it again in a later dispatch (the
// wait alone could deadlock a subgroup: see ST_RETRY).
uint op_insert(KEY k, uint value, bool or_assign) {
  uint s = home_slot(k);
  uint p = 0u;
  uint waited = 0u;
  while (p < pc.max_probe) {
    KEY cur = LOAD_KEY(slots.table[s].key);
    if (cur == EMPTY_KEY) {
      cur = atomicCompSwap(slots.table[s].key, EMPTY_KEY, k, CAS_ORDER);
      if (cur == EMPTY_KEY) {
        STORE_WORD(slots.table[s].value, value, RELAXED);
        atomicOr(ready.bits[s >> 5], 1u << (s & 31u), RELEASE);
        return ST_INSERTED;
      }
    }
    if (cur == k) {
      if (is_ready(s)) {
        if (!or_assign) return ST_FOUND;
        STORE_WORD(slots.table[s].value, value, RELEASE);
        return ST_ASSIGNED;
      }
      if (waited++ >= pc.pending_waits) return ST_RETRY;
      continue;  // pending: look at the same slot again
    }
    s = (s + 1u) & pc.capacity_mask;  // another key or a tombstone (never becomes k: M1)
    ++p;
  }
  return ST_FULL;
}
