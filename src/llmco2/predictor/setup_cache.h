// predictor/setup_cache.h - what a predictor prepares per setup (model, GPU, GPU count, precision, engine, scenario),
// kept between its predictions and lent to one thread at a time.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/error.h"
#include "predictor/input.h"
#include "predictor/module.h"

namespace llmco2::predictor {

// Up to `capacity` prepared states, each with the configuration it was made for (whose model and GPU it keeps
// alive). take() lends out an idle state of the configuration's setup (same_setup), or none; give_back() keeps it,
// dropping the one returned longest ago when full. Two threads never hold the same state. A setup is worth
// preparing when it comes again: `seen` says whether it was asked for before (among the last `capacity` setups
// asked for without a state), so that a one-off request (a command's, or a server's whose model was copied for it)
// costs the plain path, not the preparation too.
template <typename State>
class SetupCache {
 public:
  struct Lent {
    PredictorInput setup;
    std::unique_ptr<State> state;  // null: none was idle
    bool seen = false;             // without a state: the setup was asked for before
  };

  explicit SetupCache(size_t capacity) : capacity_(capacity) {}

  Lent take(const PredictorInput& config) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = idle_.size(); i-- > 0;) {
      if (!same_setup(idle_[i].setup, config)) continue;
      Lent lent = std::move(idle_[i]);
      idle_.erase(idle_.begin() + static_cast<long>(i));
      return lent;
    }
    for (const PredictorInput& s : seen_)
      if (same_setup(s, config)) return {config, nullptr, true};
    if (seen_.size() >= capacity_) seen_.erase(seen_.begin());
    seen_.push_back(config);
    return {config, nullptr, false};
  }

  // use(state) on the setup's kept state, made by make() when the setup comes the second time: nullopt for a setup's
  // first request (the caller's plain path answers it), and when make or use throws Error (an invalid setup or counts,
  // checked before a state changes: the plain path reports them). A state goes back whatever use did.
  template <typename Make, typename Use>
  auto with_state(const PredictorInput& config, Make make, Use use) -> decltype(use(std::declval<State&>())) {
    Lent lent = take(config);
    decltype(use(std::declval<State&>())) out;
    if (!lent.state && !lent.seen) return out;
    try {
      if (!lent.state) lent.state = make();
      out = use(*lent.state);
    } catch (const Error&) {
    }
    if (lent.state) give_back(std::move(lent));
    return out;
  }

  void give_back(Lent lent) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.size() >= capacity_) idle_.erase(idle_.begin());
    idle_.push_back(std::move(lent));
  }

 private:
  size_t capacity_;
  std::mutex mutex_;
  std::vector<Lent> idle_;            // least recently given back first
  std::vector<PredictorInput> seen_;  // setups asked for without a state, oldest first
};

}  // namespace llmco2::predictor
