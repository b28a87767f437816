// bench/bench_serving.cc - the serving replay: the whole Azure 2023 chat trace (19,366 requests, about an hour) through
// one H100 SXM running Llama-3.1-8B under vLLM v1's scheduler, every iteration priced (memoised) by the simulator,
// on one thread. The log is read once outside the timing; items are requests replayed. BM_ServeSimMillionRequests
// streams the same hour 52 times over (1,007,032 requests, 52 hours) to show that a long log costs time, not memory.
#include <benchmark/benchmark.h>

#include "core/paths.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"
#include "serving/serve_sim.h"
#include "speculation/speculation.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

Deployment llama_on_h100() {
  Deployment d;
  d.model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  d.gpu = GpuCatalog::bundled().resolve("h100-sxm");
  d.setup.precision = d.model.default_precision;
  return d;
}

// The chat hour replayed on `d` for each iteration: items are requests, and the counter the distinct step shapes
// priced (the rest came from the memo).
void replay_the_hour(benchmark::State& state, const Deployment& d) {
  const RequestLog log = read_request_log(data_dir() / "azure" / "AzureLLMInferenceTrace_conv.csv");
  const SimParams params = load_sim_params(default_sim_params_path());
  long requests = 0, shapes = 0;
  for (auto _ : state) {
    const ReplayTotals t = replay(log, d, params, {}, [](const ServedRequest&) {});
    benchmark::DoNotOptimize(t.busy_energy_j);
    requests += t.completed;
    shapes = t.distinct_shapes;
  }
  state.SetItemsProcessed(requests);
  state.counters["distinct_shapes"] = static_cast<double>(shapes);
}

void BM_ServeSimAzureChat(benchmark::State& state) { replay_the_hour(state, llama_on_h100()); }
BENCHMARK(BM_ServeSimAzureChat)->Unit(benchmark::kMillisecond);

void BM_ServeSimMillionRequests(benchmark::State& state) {
  const RequestLog log = read_request_log(data_dir() / "azure" / "AzureLLMInferenceTrace_conv.csv");
  const SimParams params = load_sim_params(default_sim_params_path());
  const Deployment d = llama_on_h100();
  constexpr int kHours = 52;
  long requests = 0, peak = 0;
  for (auto _ : state) {
    size_t next = 0;
    const RequestSource hours = [&]() -> std::optional<LoggedRequest> {  // the hour again, an hour later each time
      if (next == log.requests.size() * kHours) return std::nullopt;
      LoggedRequest r = log.requests[next % log.requests.size()];
      r.time_s = *r.time_s + 3600.0 * static_cast<double>(next / log.requests.size());
      ++next;
      return r;
    };
    const ReplayTotals t = replay(hours, d, params, {}, [](const ServedRequest&) {});
    requests += t.completed;
    peak = std::max(peak, t.peak_in_flight);
  }
  state.SetItemsProcessed(requests);
  state.counters["peak_requests_in_memory"] = static_cast<double>(peak);
}
BENCHMARK(BM_ServeSimMillionRequests)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

// Prefix caching's cost: the same hour with the first half of every prompt one shared system prompt (every request
// looks its blocks up and registers them) against BM_ServeSimAzureChat, where no request has a prefix.
void BM_ServeSimAzureChatPrefixShared(benchmark::State& state) {
  const RequestLog log = read_request_log(data_dir() / "azure" / "AzureLLMInferenceTrace_conv.csv");
  const SimParams params = load_sim_params(default_sim_params_path());
  const Deployment d = llama_on_h100();
  ReplayOptions shared;
  shared.prefix_share = 0.5;
  long requests = 0;
  double hit_rate = 0;
  for (auto _ : state) {
    const ReplayTotals t = replay(log, d, params, shared, [](const ServedRequest&) {});
    benchmark::DoNotOptimize(t.busy_energy_j);
    requests += t.completed;
    hit_rate = t.prefix_hit_rate();
  }
  state.SetItemsProcessed(requests);
  state.counters["hit_rate"] = hit_rate;
}
BENCHMARK(BM_ServeSimAzureChatPrefixShared)->Unit(benchmark::kMillisecond);

// Speculative decoding's cost: the same hour with EAGLE-3 drafting 4 tokens (each decode step verifies 5 positions
// and prices two draft segments; the step memo keys on them) against BM_ServeSimAzureChat.
void BM_ServeSimAzureChatEagle3(benchmark::State& state) {
  Deployment d = llama_on_h100();
  d.speculation = resolve_speculation("eagle3", 4, std::nullopt, d.model, d.setup.precision);
  replay_the_hour(state, d);
}
BENCHMARK(BM_ServeSimAzureChatEagle3)->Unit(benchmark::kMillisecond);

// Pipeline parallelism's cost: the same hour with the layers in 2 stages of 1 GPU each (one scheduler per stage, each
// step a micro-batch's chain through both stages) against BM_ServeSimAzureChat.
void BM_ServeSimAzureChatTwoStages(benchmark::State& state) {
  Deployment d = llama_on_h100();
  d.setup.pipeline_parallel = 2;
  replay_the_hour(state, d);
}
BENCHMARK(BM_ServeSimAzureChatTwoStages)->Unit(benchmark::kMillisecond);

// Disaggregated prefill and decode's cost: the same hour on 1 prefill and 1 decode H100 (two pools of schedulers and
// step memos, a KV transfer event per request over NVLink) against BM_ServeSimAzureChat.
void BM_ServeSimAzureChatDisaggregated(benchmark::State& state) {
  Deployment d = llama_on_h100();
  d.decode = make_decode_pool(d, d.gpu, d.setup, 1, d.scope);
  replay_the_hour(state, d);
}
BENCHMARK(BM_ServeSimAzureChatDisaggregated)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace llmco2
