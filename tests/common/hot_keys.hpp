#pragma once
// Racing writers on a handful of keys, for any map of the typed suite: many tiles insert, upsert,
// erase and find the same few keys in one batch, several batches in a row (even rounds through
// the synchronous execute, which runs a batch in phases by kind; odd ones through execute_async,
// one launch in which inserts, erases and finds of a key race each other). Checks that exactly
// one insert of each key wins in the first batch, that no key is ever stored twice, and that
// every batch is linearizable per key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "backend.hpp"
#include "linearizability.hpp"
#include "map_suite.hpp"

namespace warpkv::testing {

/// The race on the given keys (a map's own tests pick keys that stress one of its paths).
/// `held`: what the map holds before (other keys, which the batches leave alone).
template <class Map>
void race_on_keys(Map& map, const std::vector<typename Map::key_type>& hot, std::size_t n, int rounds,
                  std::unordered_map<typename Map::key_type, typename Map::mapped_type> held = {}) {
  using K = typename Map::key_type;
  using V = typename Map::mapped_type;
  std::unordered_map<K, V> state = std::move(held);
  std::uint64_t next = 1;
  for (int round = 0; round < rounds; ++round) {
    std::vector<op> ops(n);
    std::vector<K> keys(n);
    std::vector<V> values(n);
    for (std::size_t i = 0; i < n; ++i) {
      keys[i] = hot[i % hot.size()];
      values[i] = make_value<V>(next++);
      ops[i] = round < 2 ? (i % 2 ? op::insert : op::insert_or_assign)
                         : (i % 4 == 0 ? op::erase : i % 4 == 1 ? op::find : i % 4 == 2 ? op::insert : op::insert_or_assign);
    }
    std::vector<V> out;
    std::vector<status> st;
    if (round % 2 == 0) {
      st = map.execute(ops, keys, values, out);  // in phases by kind (reads, writes, erases)
    } else {
      // One launch in which every kind races every other (execute_async's fused batch). An async
      // call never grows the table and refuses a batch whose inserts could pass the maximum load
      // factor (or, chained_map's pool, its nodes: then the table is rebuilt once, as the error
      // advises, reclaiming erased keys' nodes); then the batch is cut to what it allows (the same
      // ops, fewer of them).
      const execution& ex = map.exec();
      auto o = buffer<op>::from_host(ops, ex);
      auto k = buffer<K>::from_host(keys, ex);
      auto v = buffer<V>::from_host(values, ex);
      buffer<status> sb(n, ex);
      buffer<V> ob(n, ex);
      std::size_t m = n;
      [[maybe_unused]] bool rebuilt = false;
      for (;;) {
        try {
          map.execute_async(o.data(), k.data(), v.data(), m, sb.data(), ob.data());
          break;
        } catch (const warpkv::error& e) {
          ASSERT_EQ(e.code(), errc::capacity) << e.what();
          if constexpr (requires { map.pool_nodes(); }) {
            // chained_map's pool: what the message advises, a rebuild that reclaims the nodes of
            // erased keys (other maps keep their table: the tests check it does not grow).
            if (!rebuilt) {
              rebuilt = true;
              map.rehash(map.capacity());
              continue;
            }
          }
          ASSERT_GT(m, hot.size()) << "no room for an async batch of " << m << " ops: " << e.what();
          m /= 2;
        }
      }
      map.synchronize();
      ops.resize(m);
      keys.resize(m);
      values.resize(m);
      st = sb.to_vector();
      st.resize(m);
      out = ob.to_vector();
      out.resize(m);
    }
    if (round == 0) {
      for (const K key : hot) {
        long wins = 0;
        for (std::size_t i = 0; i < keys.size(); ++i) wins += keys[i] == key && st[i] == status::inserted;
        EXPECT_EQ(wins, 1) << "key " << +key;
      }
    }
    auto [k, v] = map.retrieve_all();
    std::unordered_map<K, V> after;
    for (std::size_t i = 0; i < k.size(); ++i) ASSERT_TRUE(after.emplace(k[i], v[i]).second) << "a key is stored twice";
    const auto verdict = check_linearizable<K, V>(ops, keys, values, st, out, state, after);
    ASSERT_FALSE(verdict.has_value()) << "round " << round << ": " << *verdict;
    ASSERT_EQ(map.validate(), "");
    state = after;
  }
}

/// The race on keys 1..hot_count.
template <class Map>
void race_on_hot_keys(Map& map, std::size_t hot_count, std::size_t n, int rounds) {
  std::vector<typename Map::key_type> hot(hot_count);
  for (std::size_t i = 0; i < hot_count; ++i) hot[i] = make_key<typename Map::key_type>(i + 1);
  race_on_keys(map, hot, n, rounds);
}

}  // namespace warpkv::testing
