// Tests of the serving simulation: values worked out by hand or by an independent path (the simulator's isolated
// request, as `predict --predictor sim` gives it), on the bundled Llama-3.1-8B and H100 SXM with the calibrated
// parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"
#include "serving/serve_sim.h"
#include "sim/simulator.h"

namespace llmco2 {
namespace {

Deployment h100_deployment(int replicas = 1) {
  Deployment d;
  d.model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  d.gpu = GpuCatalog::bundled().resolve("h100-sxm");
  d.setup.precision = d.model.default_precision;
  d.setup.engine = "vllm";
  d.replicas = replicas;
  return d;
}

RequestLog log_of(const std::vector<std::array<double, 3>>& rows) {  // {arrival s, prompt, gen}
  RequestLog log;
  log.format = "azure";
  long line = 2;
  for (const auto& [t, prompt, gen] : rows)
    log.requests.push_back({t, static_cast<long>(prompt), static_cast<long>(gen), line++});
  return log;
}

struct Replayed {
  ReplayTotals totals;
  std::vector<ServedRequest> requests;
};

Replayed run_log(const RequestLog& log, const Deployment& d, ReplayOptions options = {}) {
  Replayed r;
  r.totals = replay(log, d, default_sim_params(), options, [&](const ServedRequest& q) { r.requests.push_back(q); });
  std::sort(r.requests.begin(), r.requests.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return r;
}

TEST(ServeSim, OneRequestInAnEmptySystemCostsWhatPredictSays) {
  const Deployment d = h100_deployment();
  const Replayed one = run_log(log_of({{0, 374, 44}}), d);
  ASSERT_EQ(one.requests.size(), 1u);
  Request request = d.setup;
  request.prompt_tokens = 374, request.gen_tokens = 44;
  const SimResult alone = simulate(d.model, d.gpu, request, SimScenario{}, default_sim_params());
  // Same physics, two paths: the replay prices 44 iterations at their own contexts on a 4% grid, the isolated
  // simulation one prefill and 43 decode steps at their mean context.
  EXPECT_NEAR(one.requests[0].energy_j / alone.energy_j.total(), 1.0, 0.02);
  EXPECT_NEAR(one.requests[0].finish_s / alone.latency_s.total(), 1.0, 0.02);
  EXPECT_NEAR(one.requests[0].first_token_s / alone.latency_s.prefill, 1.0, 0.02);
}

TEST(ServeSim, RequestsArrivingTogetherShareIterations) {
  const Deployment d = h100_deployment();
  const Replayed one = run_log(log_of({{0, 512, 128}}), d);
  const Replayed two = run_log(log_of({{0, 512, 128}, {0, 512, 128}}), d);
  ASSERT_EQ(two.requests.size(), 2u);
  const double makespan_one = one.requests[0].finish_s;
  const double makespan_two = std::max(two.requests[0].finish_s, two.requests[1].finish_s);
  // Batched decode streams the 16 GB of weights once per step for both: far less than twice the time, more than once.
  EXPECT_LT(makespan_two, 1.3 * makespan_one);
  EXPECT_GT(makespan_two, makespan_one);
  EXPECT_EQ(two.totals.steps, one.totals.steps);  // prefills ride together, then 127 shared decode steps
}

TEST(ServeSim, ArrivalsFasterThanServiceBuildALinearQueue) {
  Deployment d = h100_deployment();
  d.max_num_seqs = 1;  // one request at a time: service time T per request
  const Replayed single = run_log(log_of({{0, 256, 64}}), d);
  const double service_s = single.requests[0].finish_s;
  const double gap_s = service_s / 2;  // arrivals twice as fast as service
  std::vector<std::array<double, 3>> rows;
  for (int k = 0; k < 50; ++k) rows.push_back({k * gap_s, 256, 64});
  const Replayed queue = run_log(log_of(rows), d);
  ASSERT_EQ(queue.requests.size(), 50u);
  // Request k waits for the k requests before it minus its later arrival: k (T - gap) = k T / 2.
  auto wait = [&](int k) { return queue.requests[k].scheduled_s - queue.requests[k].arrival_s; };
  EXPECT_NEAR(wait(40) - wait(10), 30 * (service_s - gap_s), 0.01 * 30 * service_s);
  EXPECT_NEAR(wait(25) - wait(10), 15 * (service_s - gap_s), 0.01 * 15 * service_s);
}

TEST(ServeSim, AnEmptyHourDrawsIdlePowerOfEveryGpu) {
  const Deployment d = h100_deployment(2);
  ReplayOptions options;
  options.duration_s = 3600;
  const Replayed r = run_log(log_of({{0, 1, 1}}), d, options);
  EXPECT_DOUBLE_EQ(r.totals.window_s, 3600.0);
  // 2 replicas x 1 GPU x 3,600 s at the catalog idle power, less the one-token request's few milliseconds.
  const double expected_j = d.gpu.idle_w * 2 * 3600;
  EXPECT_NEAR(r.totals.idle_energy_j, expected_j, 1e-4 * expected_j);
  EXPECT_LT(r.totals.idle_energy_j, expected_j);
}

TEST(ServeSim, RequestEnergiesAddUpToTheBusyEnergy) {
  const Deployment d = h100_deployment(2);
  std::vector<std::array<double, 3>> rows;
  for (int k = 0; k < 40; ++k) rows.push_back({0.05 * k, 100.0 + 37 * (k % 7), 20.0 + 11 * (k % 5)});
  const Replayed r = run_log(log_of(rows), d);
  ASSERT_EQ(r.requests.size(), 40u);
  double sum_j = 0;
  for (const auto& q : r.requests) sum_j += q.energy_j;
  EXPECT_NEAR(sum_j, r.totals.busy_energy_j, 1e-9 * r.totals.busy_energy_j);
  for (const auto& q : r.requests) {
    EXPECT_GT(q.energy_j, 0);
    EXPECT_LE(q.arrival_s, q.scheduled_s);
    EXPECT_LT(q.scheduled_s, q.first_token_s);
    EXPECT_LE(q.first_token_s, q.finish_s);
  }
}

TEST(ReplicaScheduler, ASmallCachePreemptsAndLosesNoRequest) {
  // 10 blocks of 16 tokens; each request grows to 40 + 60 = 100 tokens (7 blocks): two cannot both finish in cache.
  ReplicaScheduler scheduler({8, 64, 16, 10});
  std::vector<ServedRequest> requests(4);
  for (int i = 0; i < 4; ++i) {
    requests[i].id = i, requests[i].prompt_tokens = 40, requests[i].gen_tokens = 60;
    scheduler.enqueue(&requests[i]);
  }
  long finished = 0, iterations = 0;
  while (!scheduler.idle() && iterations < 100000) {
    const auto work = scheduler.schedule();
    ASSERT_FALSE(work.empty());
    long tokens = 0;
    for (const auto& w : work) tokens += w.tokens;
    EXPECT_LE(tokens, 64);
    EXPECT_LE(scheduler.used_blocks(), 10);
    finished += static_cast<long>(scheduler.complete(work).size());
    ++iterations;
  }
  EXPECT_EQ(finished, 4);
  EXPECT_GT(scheduler.preemptions(), 0);
  for (const auto& r : requests) EXPECT_EQ(r.generated, 60);
  EXPECT_EQ(scheduler.used_blocks(), 0);
}

TEST(SchedulerLimits, FollowVllmDefaultsAndTheMemoryLeft) {
  Deployment d = h100_deployment();
  const SchedulerLimits h100 = scheduler_limits(d);
  EXPECT_EQ(h100.max_num_seqs, 1024);  // >= 70 GiB and not an A100
  EXPECT_EQ(h100.max_batched_tokens, 8192);
  // 80 GB x 0.9 - 16 GB of bf16 weights - the activation peak leaves ~55 GB; a Llama-3.1-8B token holds 32 layers x
  // 8 KV heads x 128 x 2 (K, V) x 2 bytes = 128 KiB, a 16-token block 2 MiB: about 26,000 blocks.
  EXPECT_GT(h100.kv_blocks, 24000);
  EXPECT_LT(h100.kv_blocks, 28000);
  d.gpu = GpuCatalog::bundled().resolve("a100-80gb-sxm");
  EXPECT_EQ(scheduler_limits(d).max_batched_tokens, 2048);  // the A100 keeps the small defaults
}

}  // namespace
}  // namespace llmco2
