// core/read_once.h - catalog items read from their files at most once per process, by id, from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace llmco2 {

// Items read at most once each, by id; thread-safe, the references stay valid as long as the ReadOnce.
template <class Item>
class ReadOnce {
 public:
  // The item of `id`, calling read() the first time.
  template <class Read>
  const Item& get(std::string_view id, Read read) {
    std::lock_guard lock(mutex_);
    auto slot = items_.find(id);
    if (slot == items_.end()) slot = items_.emplace(std::string(id), std::make_unique<const Item>(read())).first;
    return *slot->second;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<const Item>, std::less<>> items_;
};

}  // namespace llmco2
