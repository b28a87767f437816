// research/held_out.cc - parallel held-out fits of the simulator.
#include "research/held_out.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/progress.h"

namespace llmco2::research {

std::map<std::string, SimParams> leave_one_group_out(const CalibrationSet& set, const FitOptions& fit, unsigned threads,
                                                     const std::function<std::string(size_t)>& group_of,
                                                     std::vector<SimEstimate>& out, const std::string& command) {
  std::vector<std::string> sources;
  for (size_t s = 0; s < set.samples.size(); ++s)
    if (std::find(sources.begin(), sources.end(), group_of(s)) == sources.end()) sources.push_back(group_of(s));
  std::vector<std::thread> pool;
  std::atomic<size_t> next{0}, done{0};
  std::mutex failed;
  std::exception_ptr failure;
  std::map<std::string, SimParams> fitted;
  const auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    try {
      for (size_t k; (k = next++) < sources.size();) {
        std::vector<size_t> train, test;
        for (size_t s = 0; s < set.samples.size(); ++s) (group_of(s) == sources[k] ? test : train).push_back(s);
        const SimParams params = fit_params(set, train, default_sim_params(), fit);
        for (size_t s : test) out[s] = predict(set.samples[s], params);
        {
          std::lock_guard lock(failed);
          fitted.emplace(sources[k], params);
        }
        const size_t finished = ++done;
        const double elapsed_s = seconds_since(start);
        std::cerr << fmt::format(
            "{}: held out {} ({} rows), {}/{} groups done, {:.1f} groups/min, ETA {:.0f} s\n", command, sources[k],
            test.size(), finished, sources.size(), 60.0 * static_cast<double>(finished) / elapsed_s,
            elapsed_s / static_cast<double>(finished) * static_cast<double>(sources.size() - finished));
      }
    } catch (...) {
      next = sources.size();
      std::lock_guard lock(failed);
      if (!failure) failure = std::current_exception();
    }
  };
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
  return fitted;
}

}  // namespace llmco2::research
