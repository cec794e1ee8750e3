#pragma once
// Per-key linearizability check of one concurrent batch of map operations.
//
// All operations of a batch are concurrent with each other, so the batch is
// linearizable iff, for every key separately, SOME order of that key's operations
// explains every reported status and value, starting from the key's state before
// the batch and ending in its state after it. Trying orders is hopeless for hot
// keys (a thousand operations on one key), so the check uses map semantics, with
// every written value unique in the batch (the tests make them so):
//   - the key alternates absent/present; successful inserts (absent->present) and
//     erases (present->absent) must balance to the observed final state;
//   - a value read by find must have been written by an insert/assign that
//     succeeded in this batch, or be the initial value;
//   - ops that need an absent phase (not_found, or inserted) need one to exist, those
//     that need a present phase (found, assigned, erased) need one to exist;
//   - a final value must come from a write that can be placed last.
// These conditions are necessary, and (argued in docs/design/hopscotch.md) sufficient.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "warpkv/core/status.hpp"

namespace warpkv::testing {

template <class Key, class Value>
struct key_state {
  bool present = false;
  Value value{};
};

template <class Value>
struct value_hash {
  std::size_t operator()(const Value& v) const {
    std::uint64_t b = 0;
    static_assert(sizeof(Value) <= 8);
    std::memcpy(&b, &v, sizeof(Value));
    return std::hash<std::uint64_t>{}(b);
  }
};
template <class Value>
bool same_bits(const Value& a, const Value& b) {
  return std::memcmp(&a, &b, sizeof(Value)) == 0;
}
template <class Value>
struct value_eq {
  bool operator()(const Value& a, const Value& b) const { return same_bits(a, b); }
};

/// Returns an explanation of the first violation, or nullopt if the batch is linearizable.
/// `before`/`after` give each key's state around the batch (absent keys may be missing).
template <class Key, class Value>
std::optional<std::string> check_linearizable(const std::vector<op>& ops, const std::vector<Key>& keys,
                                              const std::vector<Value>& values, const std::vector<status>& st,
                                              const std::vector<Value>& values_out,
                                              const std::unordered_map<Key, Value>& before,
                                              const std::unordered_map<Key, Value>& after) {
  std::map<Key, std::vector<std::size_t>> by_key;
  for (std::size_t i = 0; i < ops.size(); ++i) by_key[keys[i]].push_back(i);

  for (const auto& [key, idx] : by_key) {
    auto fail = [&, key = key](const std::string& why) {
      std::ostringstream os;
      os << "key " << +key << ": " << why << " (" << idx.size() << " ops)";
      return std::optional<std::string>(os.str());
    };
    const auto b = before.find(key);
    const auto a = after.find(key);
    const bool start_present = b != before.end();
    const bool end_present = a != after.end();

    std::size_t to_present = 0, to_absent = 0, assigns = 0;
    bool needs_absent = false, needs_present = false;
    std::unordered_set<Value, value_hash<Value>, value_eq<Value>> written;
    std::unordered_map<Value, std::size_t, value_hash<Value>, value_eq<Value>> writer;  // value -> op index
    std::vector<std::size_t> reads;
    for (std::size_t i : idx) {
      const status s = st[i];
      switch (ops[i]) {
        case op::insert:
          if (s == status::inserted) ++to_present, written.insert(values[i]), writer[values[i]] = i;
          else if (s == status::found) needs_present = true;
          else return fail("insert returned " + std::string(to_string(s)));
          break;
        case op::insert_or_assign:
          if (s == status::inserted) ++to_present, written.insert(values[i]), writer[values[i]] = i;
          else if (s == status::assigned) ++assigns, needs_present = true, written.insert(values[i]), writer[values[i]] = i;
          else return fail("insert_or_assign returned " + std::string(to_string(s)));
          break;
        case op::erase:
          if (s == status::erased) ++to_absent;
          else if (s == status::not_found) needs_absent = true;
          else return fail("erase returned " + std::string(to_string(s)));
          break;
        case op::find:
        case op::contains:
          if (s == status::found) needs_present = true, reads.push_back(i);
          else if (s == status::not_found) needs_absent = true;
          else return fail("find returned " + std::string(to_string(s)));
          break;
      }
    }
    // Presence alternates: the transition counts must lead from the start to the end state.
    const long long delta = static_cast<long long>(to_present) - static_cast<long long>(to_absent);
    const long long expect = static_cast<long long>(end_present) - static_cast<long long>(start_present);
    if (delta != expect) return fail("inserts - erases = " + std::to_string(delta) + " but presence changed by " + std::to_string(expect));
    if (needs_absent && start_present && to_absent == 0) return fail("an op saw the key absent but it never was");
    if (needs_present && !start_present && to_present == 0) return fail("an op saw the key present but it never was");
    for (std::size_t r : reads) {
      const Value& v = ops[r] == op::contains ? Value{} : values_out[r];
      if (ops[r] == op::contains) continue;
      const bool initial = start_present && same_bits(v, b->second);
      if (!initial && written.count(v) == 0) return fail("find read a value nobody wrote");
    }
    if (end_present) {
      const Value& vf = a->second;
      const std::size_t groups = to_present + (start_present ? 1 : 0);  // present phases
      if (written.empty()) {
        if (!start_present || !same_bits(vf, b->second)) return fail("final value was never written");
      } else {
        const auto w = writer.find(vf);
        if (w == writer.end()) return fail("final value is not the value of a successful write");
        // A final value written by an insert opens the last present phase: the batch's assigns
        // must then fit into earlier present phases.
        if (st[w->second] == status::inserted && assigns > 0 && groups < 2)
          return fail("final value comes from an insert although an assign must follow it");
      }
    } else if (!written.empty() && to_absent == 0) {
      return fail("key absent at the end although a write succeeded and nothing erased it");
    }
  }
  return std::nullopt;
}

/// A map's live entries (retrieve_all) keyed by key; a key stored twice sets `duplicate`.
template <class Map>
std::unordered_map<typename Map::key_type, typename Map::mapped_type> contents_of(const Map& map,
                                                                                   std::optional<std::string>& duplicate) {
  auto [keys, values] = map.retrieve_all();
  std::unordered_map<typename Map::key_type, typename Map::mapped_type> out;
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (!out.emplace(keys[i], values[i]).second && !duplicate) duplicate = "a key is stored twice";
  return out;
}

/// Runs one mixed batch through `map.execute` and checks it: per-key linearizability against
/// `state` (the contents before the batch), no key stored twice, `map.validate()` clean. On
/// success `state` becomes the contents after the batch. Returns the first failure, if any;
/// `statuses` (optional) receives the batch's statuses.
template <class Map>
std::optional<std::string> execute_and_check(Map& map, const std::vector<op>& ops,
                                             const std::vector<typename Map::key_type>& keys,
                                             const std::vector<typename Map::mapped_type>& values,
                                             std::unordered_map<typename Map::key_type, typename Map::mapped_type>& state,
                                             std::vector<status>* statuses = nullptr) {
  using K = typename Map::key_type;
  using V = typename Map::mapped_type;
  std::vector<V> out;
  const auto st = map.execute(ops, keys, values, out);
  std::optional<std::string> problem;
  auto after = contents_of(map, problem);
  if (!problem) problem = check_linearizable<K, V>(ops, keys, values, st, out, state, after);
  if (!problem) {
    if (const std::string v = map.validate(); !v.empty()) problem = "validate(): " + v;
  }
  if (statuses != nullptr) *statuses = st;
  if (!problem) state = std::move(after);
  return problem;
}

}  // namespace warpkv::testing
