// trace/shape_map.h - a hash map from a request shape's key (prompt << 32 | gen, never 0) to a number: open
// addressing with linear probing in two flat arrays, the per-request lookup of the streaming accountant.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "trace/module.h"

namespace llmco2::trace {

class ShapeMap {
 public:
  ShapeMap() { rehash(64); }

  // The number of `key` (never 0), inserted as 0 when absent.
  long& operator[](uint64_t key) {
    size_t slot = first_slot(key);
    for (; keys_[slot] != 0; slot = (slot + 1) & mask_)
      if (keys_[slot] == key) return values_[slot];
    if (2 * (size_ + 1) > keys_.size()) {
      rehash(2 * keys_.size());
      return (*this)[key];
    }
    ++size_;
    keys_[slot] = key;
    return values_[slot];
  }
  // The number of `key`, or nullptr.
  const long* find(uint64_t key) const {
    for (size_t slot = first_slot(key); keys_[slot] != 0; slot = (slot + 1) & mask_)
      if (keys_[slot] == key) return &values_[slot];
    return nullptr;
  }
  size_t size() const { return size_; }
  // Calls f(key, number) for each entry (in no particular order).
  template <typename F>
  void for_each(F f) const {
    for (size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] != 0) f(keys_[i], values_[i]);
  }

 private:
  size_t first_slot(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_ & mask_; }
  void rehash(size_t capacity) {  // a power of two
    std::vector<uint64_t> keys(capacity, 0);
    std::vector<long> values(capacity, 0);
    keys.swap(keys_);
    values.swap(values_);
    mask_ = capacity - 1;
    shift_ = 64 - __builtin_ctzll(capacity);
    size_ = 0;
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != 0) (*this)[keys[i]] = values[i];
  }

  std::vector<uint64_t> keys_;
  std::vector<long> values_;
  size_t size_ = 0, mask_ = 0;
  int shift_ = 0;
};

}  // namespace llmco2::trace
