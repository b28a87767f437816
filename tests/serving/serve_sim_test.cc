// Tests of the serving simulation: values worked out by hand or by an independent path (the simulator's isolated
// request, as `predict --predictor sim` gives it), on the bundled Llama-3.1-8B and H100 SXM with the calibrated
// parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <set>

#include "compare/capacity.h"
#include "core/error.h"
#include "evaluation/serving_validation.h"
#include "hardware/gpu_catalog.h"
#include "hardware/node.h"
#include "model/model_catalog.h"
#include "serving/serve_sim.h"
#include "serving/step_cost.h"
#include "sim/simulator.h"
#include "support/all_modules.h"

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

// Issue 41: the library bounds the replicas a replay simulates (the API and Python reach it without the CLI's check).
TEST(ServeSim, ReplicasBeyondTheBoundAreRefused) {
  const RequestLog log = log_of({{0, 128, 8}});
  for (int replicas : {0, kMaxReplicas + 1}) {
    std::string message;
    try {
      run_log(log, h100_deployment(replicas));
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_NE(message.find("--replicas must be 1 to 1024"), std::string::npos) << replicas << ": " << message;
  }
  EXPECT_EQ(run_log(log, h100_deployment(kMaxReplicas)).totals.completed, 1);
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
  // The batch each ran at (the evidence's batch): every iteration ran all the requests there were.
  EXPECT_DOUBLE_EQ(one.totals.mean_running(), 1.0);
  EXPECT_DOUBLE_EQ(two.totals.mean_running(), 2.0);
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

// At node scope on the round-number test node (testdata/nodes/test_node.json): 8 idle H100s at 75 W and a host of
// CPUs 200 + DIMMs 10 x 2 + 450 W fixed + fans at their 100 W floor (heat 1270 W is 16% of 8 kW: 1000 x 0.16^3 = 4 W)
// draw 600 + 770 = 1370 W DC, 13.7% of 10 kW: efficiency 0.90 + 0.04 x 0.037 / 0.1 = 0.9148. Each GPU's share is
// 1370 / 0.9148 / 8 = 187.2 W, so the hour costs 2 x 3,600 x 187.2 J.
TEST(ServeSim, AnEmptyHourAtNodeScopeDrawsTheIdleNodesShare) {
  Deployment d = h100_deployment(2);
  d.scope.node = node_from_json(read_json_file(std::string(LLMCO2_TESTDATA) + "/nodes/test_node.json"), "test");
  ReplayOptions options;
  options.duration_s = 3600;
  const Replayed r = run_log(log_of({{0, 1, 1}}), d, options);
  const double expected_j = 2 * 3600 * 1370 / 0.9148 / 8;
  EXPECT_NEAR(r.totals.idle_energy_j, expected_j, 1e-4 * expected_j);
}

// A power limit (nvidia-smi -pl) holds a saturated GPU's mean power at the limit and costs throughput: the clocks
// drop and compute-bound work stretches (sim/simulator.h throttled_power_w).
TEST(ServeSim, APowerCapHoldsSaturatedPowerAtTheCapAndSlowsTheRun) {
  Deployment free = h100_deployment();
  free.max_num_seqs = 256;
  Deployment capped = free;
  capped.power.cap_w = 300;
  LoadTest test;
  test.requests = 600, test.prompt_tokens = 1024, test.gen_mean = 64;
  const SteadyState a = run_load_test(free, default_sim_params(), test),
                    b = run_load_test(capped, default_sim_params(), test);
  ASSERT_TRUE(a.valid && b.valid);
  const auto mean_w = [](const SteadyState& s) {
    return s.energy_per_token_j * static_cast<double>(s.tokens) / s.window_s;
  };
  EXPECT_GT(mean_w(a), 300);           // uncapped, the run draws more than the cap
  EXPECT_LE(mean_w(b), 300 * 1.0001);  // capped, never more
  EXPECT_GT(mean_w(b), 0.95 * 300);    // and saturated at it
  EXPECT_LT(static_cast<double>(b.tokens) / b.window_s, static_cast<double>(a.tokens) / a.window_s);
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

TEST(ReplicaScheduler, ABeamSearchRequestPrefillsOnceAndDecodesEveryBeam) {
  // Prompt 100, 3 output tokens, 4 beams, blocks of 16: one prefill of 100 rows gives the first token; each later
  // step runs 4 rows (one per beam) and advances one position.
  ReplicaScheduler scheduler({8, 512, 16, 100});
  ServedRequest r;
  r.prompt_tokens = 100, r.gen_tokens = 3, r.beams = 4;
  scheduler.enqueue(&r);
  const std::vector<std::pair<long, long>> expected{{100, 100}, {4, 1}, {4, 1}};  // {rows, positions}
  for (const auto& [rows, positions] : expected) {
    const auto work = scheduler.schedule();
    ASSERT_EQ(work.size(), 1u);
    EXPECT_EQ(work[0].tokens, rows);
    EXPECT_EQ(work[0].positions, positions);
    // Cache after this step's positions: ceil(100 / 16) = 7 prompt blocks shared by the beams, plus one block per
    // beam once a generated position is cached.
    EXPECT_EQ(scheduler.used_blocks(), r.computed + positions > 100 ? 7 + 4 : 7);
    scheduler.complete(work);
  }
  EXPECT_TRUE(r.done());
  EXPECT_TRUE(scheduler.idle());
  EXPECT_EQ(r.blocks_for(100 + 17, 16), 7 + 4 * 2);  // 17 generated positions: two blocks per beam
  ServedRequest recomputed = r;  // after a preemption, 98 positions cached: 2 prompt positions, then 3 of each beam
  recomputed.computed = 98;
  EXPECT_EQ(recomputed.rows(5), 2 + 3 * 4);
  EXPECT_EQ(recomputed.positions_within(13), 2 + 2);  // 11 rows left after the prompt: two positions of 4 beams
}

TEST(ServeSim, ABeamSearchStepCostsTheDecodeOfEveryBeam) {
  // One 4-beam request (prompt 100, 3 tokens) alone on the H100: its energy is one prefill of 100 rows, then two
  // steps of 4 decodes at contexts 101 and 102 sampling 4 rows of logits each, priced by the same step-cost model.
  const Deployment d = h100_deployment();
  RequestLog log = log_of({{0, 100, 3}});
  log.requests[0].beams = 4;
  std::vector<StepRecord> steps;
  ReplayOptions options;
  options.on_step = [&](const StepRecord& s) {
    if (!s.idle) steps.push_back(s);
  };
  const Replayed beam = run_log(log, d, options);
  ASSERT_EQ(steps.size(), 3u);
  StepCostModel costs(d.model, d.gpu, d.setup, default_sim_params(), d.sampling, d.power);
  auto energy_j = [&](const MixedStep& m) {
    const StepCost c = costs.cost(m);
    return c.power_w * c.time_s;
  };
  const double expected_j =
      energy_j({0, 1, 100, 1, 0, 1}) + energy_j({4, 101, 0, 0, 0, 4}) + energy_j({4, 102, 0, 0, 0, 4});
  EXPECT_NEAR(beam.requests[0].energy_j / expected_j, 1.0, 1e-9);
  for (const StepRecord& s : steps) EXPECT_EQ(s.sampled, 1);  // one output token per step: the request's
  EXPECT_EQ(steps[1].decodes, 1);
  // Greedy decoding of the same request: 1 decode per step, less energy.
  const Replayed greedy = run_log(log_of({{0, 100, 3}}), d);
  EXPECT_LT(greedy.requests[0].energy_j, beam.requests[0].energy_j);
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

TEST(ServeSim, AStreamThatGoesBackInTimeIsRefusedWithItsLine) {
  const RequestLog log = log_of({{10, 100, 10}, {5, 100, 10}});
  size_t next = 0;
  const RequestSource unsorted = [&]() -> std::optional<LoggedRequest> {
    if (next == log.requests.size()) return std::nullopt;
    return log.requests[next++];
  };
  try {
    replay(unsorted, h100_deployment(), default_sim_params(), {}, [](const ServedRequest&) {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
  // The same log in memory is sorted first and replays.
  EXPECT_EQ(run_log(log, h100_deployment()).totals.completed, 2);
}

TEST(ServeSim, MemoryFollowsTheRequestsInFlightNotTheLog) {
  // 200 short requests a minute apart: each finishes long before the next arrives, so two slots serve them all (the
  // one in flight and the next arrival, read ahead).
  std::vector<std::array<double, 3>> rows;
  for (int i = 0; i < 200; ++i) rows.push_back({60.0 * i, 100, 10});
  const Replayed r = run_log(log_of(rows), h100_deployment());
  EXPECT_EQ(r.totals.completed, 200);
  EXPECT_EQ(r.totals.peak_in_flight, 2);
}

TEST(ServeSim, AttributedIdleIsTheGapBeforeTheIterationThatEndsIt) {
  // Two requests 100 s apart on one idle GPU. The gap before the second request's first iteration (100 s minus the
  // first request's run) at the catalog's idle power goes to the second request; the tail after it stays apart.
  const Deployment d = h100_deployment();
  const RequestLog log = log_of({{0, 200, 20}, {100, 200, 20}});
  const Replayed plain = run_log(log, d);
  ReplayOptions attribute;
  attribute.attribute_idle = true;
  attribute.duration_s = 200;  // a window past the end: an idle tail
  const Replayed spread = run_log(log, d, attribute);
  const double gap_s = 100.0 - plain.requests[0].finish_s;
  EXPECT_NEAR(spread.requests[1].energy_j - plain.requests[1].energy_j, d.gpu.idle_w * gap_s, 1e-6 * d.gpu.idle_w);
  EXPECT_NEAR(spread.requests[0].energy_j, plain.requests[0].energy_j, 1e-9);
  EXPECT_NEAR(spread.totals.attributed_idle_j, d.gpu.idle_w * gap_s, 1e-6 * d.gpu.idle_w);
  const double tail_s = 200.0 - plain.requests[1].finish_s;
  EXPECT_NEAR(spread.totals.idle_energy_j - spread.totals.attributed_idle_j, d.gpu.idle_w * tail_s, 1e-3);
  EXPECT_NEAR(spread.requests[0].energy_j + spread.requests[1].energy_j,
              spread.totals.busy_energy_j + spread.totals.attributed_idle_j, 1e-6);
}

TEST(ServeSim, StepRecordsCoverTheWindowAndAddUpToTheTotals) {
  const Deployment d = h100_deployment(2);
  ReplayOptions options;
  options.duration_s = 30;
  double energy_j = 0, covered_s = 0;
  long sampled = 0;
  options.on_step = [&](const StepRecord& s) {
    energy_j += s.energy_j;
    covered_s += s.time_s;
    sampled += s.sampled;
  };
  const Replayed r = run_log(log_of({{0, 300, 50}, {1, 300, 70}, {2.5, 100, 5}}), d, options);
  EXPECT_NEAR(energy_j, r.totals.busy_energy_j + r.totals.idle_energy_j, 1e-6);
  EXPECT_NEAR(covered_s, 2 * 30.0, 1e-9);  // two replicas, each metered over the whole 30 s window
  EXPECT_EQ(sampled, 50 + 70 + 5);         // every output token comes out of exactly one iteration
}

// The most requests in flight at once: sent (arrival_s) and not finished, from the replay's own figures.
long peak_in_flight(const std::vector<ServedRequest>& requests) {
  std::vector<std::pair<double, int>> events;  // a finish at t comes before a send at t (the client sends after)
  for (const ServedRequest& r : requests) events.push_back({r.arrival_s, 1}), events.push_back({r.finish_s, -1});
  std::sort(events.begin(), events.end());
  long now = 0, peak = 0;
  for (const auto& [t, delta] : events) peak = std::max(peak, now += delta);
  return peak;
}

RequestLog queue_of(int requests, long prompt, long gen) {  // a log without timestamps: the clients' queue
  RequestLog log;
  for (int k = 0; k < requests; ++k) log.requests.push_back({std::nullopt, prompt, gen, k + 2});
  return log;
}

// One client sends each request when the one before ends: request k runs alone from k x T to (k + 1) x T, where T is
// one request's time in an empty system, and the run lasts as long as predict's figure times the requests.
TEST(ClosedLoop, OneClientRunsTheRequestsBackToBack) {
  const Deployment d = h100_deployment();
  ReplayOptions one_client;
  one_client.concurrency = 1;
  const Replayed alone = run_log(queue_of(1, 374, 44), d);
  const double t_s = alone.requests[0].finish_s;
  const Replayed loop = run_log(queue_of(5, 374, 44), d, one_client);
  ASSERT_EQ(loop.requests.size(), 5u);
  for (int k = 0; k < 5; ++k) {
    EXPECT_NEAR(loop.requests[k].arrival_s, k * t_s, 1e-9 * t_s) << k;
    EXPECT_NEAR(loop.requests[k].finish_s, (k + 1) * t_s, 1e-9 * t_s) << k;
    EXPECT_NEAR(loop.requests[k].energy_j, alone.requests[0].energy_j, 1e-9 * alone.requests[0].energy_j) << k;
  }
  EXPECT_NEAR(loop.totals.idle_energy_j, 0.0, 1e-9);  // no gap between a finish and the next send
  EXPECT_DOUBLE_EQ(loop.totals.mean_running(), 1.0);  // one request at a time
  Request request = d.setup;
  request.prompt_tokens = 374, request.gen_tokens = 44;
  const SimResult predicted = simulate(d.model, d.gpu, request, SimScenario{}, default_sim_params());
  EXPECT_NEAR(loop.totals.window_s / (5 * predicted.latency_s.total()), 1.0, 0.02);
  // The log's times still bound a closed loop: a request logged later than its client is free waits for its time.
  const Replayed late = run_log(log_of({{0, 374, 44}, {3 * t_s, 374, 44}}), d, one_client);
  EXPECT_NEAR(late.requests[1].arrival_s, 3 * t_s, 1e-9 * t_s);
  EXPECT_NEAR(late.requests[1].finish_s, 4 * t_s, 1e-6 * t_s);
}

// N clients: never more than N requests sent and unfinished, and N at once while the queue lasts; an open loop of the
// same queue sends all of them at time 0.
TEST(ClosedLoop, NClientsNeverExceedNInFlight) {
  const Deployment d = h100_deployment();
  const RequestLog log = queue_of(40, 256, 32);
  for (long clients : {1L, 3L, 8L}) {
    ReplayOptions o;
    o.concurrency = clients;
    const Replayed r = run_log(log, d, o);
    ASSERT_EQ(r.requests.size(), 40u);
    EXPECT_EQ(peak_in_flight(r.requests), clients) << clients;
    EXPECT_LE(r.totals.peak_running, clients) << clients;
    EXPECT_LE(r.totals.peak_waiting, clients) << clients;
  }
  EXPECT_EQ(peak_in_flight(run_log(log, d).requests), 40);
  ReplayOptions negative;
  negative.concurrency = -1;
  EXPECT_THROW(run_log(log, d, negative), Error);
}

// Throughput grows with the clients while the engine has room (decode reads the weights once per step for the
// whole batch), then stops at the engine's cap: beyond max_num_seqs clients the extra requests only wait. The
// bound is the engine's own saturated throughput, every request of the queue sent at once.
TEST(ClosedLoop, ThroughputGrowsWithClientsUntilTheEnginesCap) {
  Deployment d = h100_deployment();
  d.max_num_seqs = 8;
  const RequestLog log = queue_of(64, 256, 64);
  auto requests_per_s = [&](long clients) {
    ReplayOptions o;
    o.concurrency = clients;
    const ReplayTotals t = run_log(log, d, o).totals;
    return static_cast<double>(t.completed) / t.window_s;
  };
  const double saturated = requests_per_s(0);  // open loop: all 64 at time 0, 8 running at a time
  double before = 0;
  for (long clients : {1L, 2L, 4L, 8L}) {
    const double now = requests_per_s(clients);
    EXPECT_GT(now, 1.3 * before) << clients;  // doubling the batch of a bandwidth-bound decode nearly doubles it
    before = now;
  }
  EXPECT_NEAR(requests_per_s(16) / before, 1.0, 0.03);
  EXPECT_NEAR(requests_per_s(32) / requests_per_s(16), 1.0, 0.01);
  EXPECT_LE(requests_per_s(32), 1.01 * saturated);
  EXPECT_NEAR(requests_per_s(64), saturated, 1e-9 * saturated);  // as many clients as requests: the open loop
}

TEST(LoadTest, ReachesItsConcurrencyCapAtSteadyState) {
  Deployment d = h100_deployment();
  d.max_num_seqs = 32;
  LoadTest test;
  test.requests = 256, test.prompt_tokens = 100, test.gen_mean = 200, test.gen_cv = 0.5;
  const SteadyState s = run_load_test(d, default_sim_params(), test);
  ASSERT_TRUE(s.valid);
  // All requests were sent at once: between the ramp-up and the drain the engine always has 32 running (less the
  // instants where a finished request's successor is still in its prefill iteration).
  EXPECT_GT(s.mean_running, 0.95 * 32);
  EXPECT_LE(s.mean_running, 32.0 + 1e-9);
  // Energy per token at batch 32 lies between the catalog's idle and TDP power times the median gap over 32 tokens.
  EXPECT_GT(s.energy_per_token_j, d.gpu.idle_w * s.median_itl_s / 32 * 0.9);
  EXPECT_LT(s.energy_per_token_j, d.gpu.tdp_w * s.median_itl_s / 32 * 1.5);
  test.requests = 20;  // fewer requests than the cap plus the harness's margin: no steady state
  EXPECT_FALSE(run_load_test(d, default_sim_params(), test).valid);
}

// MLPerf Server's figure: at an arrival rate so low that no two requests overlap, every request decodes alone, so the
// mean time per output token is a lone request's (finish - first token) / (tokens - 1) in an empty system.
TEST(LoadTest, AnOpenLoadsMeanTpotAtALowRateIsALoneRequestsDecodePace) {
  const Deployment d = h100_deployment();
  LoadTest test;
  test.requests = 40, test.prompt_tokens = 100, test.gen_mean = 64, test.gen_cv = 0;
  const SteadyState s =
      run_open_load_test(d, default_sim_params(), test, 1e-3);  // one request every 1,000 s on average
  ASSERT_TRUE(s.valid);
  const Replayed lone = run_log(log_of({{0, 100, 64}}), d);
  ASSERT_EQ(lone.requests.size(), 1u);
  const double lone_tpot_s = (lone.requests[0].finish_s - lone.requests[0].first_token_s) / 63;
  EXPECT_GT(lone_tpot_s, 0);
  EXPECT_NEAR(s.mean_tpot_s, lone_tpot_s, 1e-6 * lone_tpot_s);
}

// Carbon inputs of a grid at 400 g/kWh and a facility of `pue`, for the planner's tests.
CarbonFor carbon_at_pue(double pue) {
  return [pue](const Gpu&, int gpus) {
    CarbonInputs c;
    c.ci_g_per_kwh = 400, c.pue = pue, c.gpus = gpus;
    return c;
  };
}

// The deployment `d` at `tp` GPUs per replica, as the planner asks for it.
DeploymentFor at_tensor_parallel(const Deployment& d) {
  return [d](const Gpu&, int tp) {
    Deployment x = d;
    x.setup.gpus = tp;
    return x;
  };
}

// The planner's case: eight requests of 200 + 500 tokens at once on H100s that run one request each (max_num_seqs 1),
// an objective of 1 s on the P95 TTFT, one GPU per replica.
struct EightLongRequests {
  EightLongRequests() {
    d.max_num_seqs = 1;
    slo.ttft_s = 1.0;
    search.tensor_parallel = {1};
  }
  CapacityPlan plan() const {
    return plan_capacity(log, {d.gpu}, at_tensor_parallel(d), default_sim_params(), slo, carbon_at_pue(1), search);
  }
  Deployment d = h100_deployment();
  ServingSlo slo;
  CapacitySearch search;
  RequestLog log = log_of(std::vector<std::array<double, 3>>(8, {0, 200, 500}));
};

TEST(Capacity, FindsTheFewestReplicasByDoublingThenBisection) {
  // Eight long requests at once, one running per replica: round-robin gives a replica ceil(8 / R) of them in a row,
  // and the second in a row waits a whole first request (~5 s) for its first token. The P95 of eight TTFTs is the
  // order statistic at rank 0.95 x 7 = 6.65, i.e. the 7th smallest: one late request passes, two do not. So 7
  // replicas (one replica with two) meet a 1 s objective and 6 (two with two) miss; the search tries 1, 2, 4, 8
  // (meets), then 6 (misses) and 7 (meets).
  const CapacityPlan plan = EightLongRequests().plan();
  std::vector<int> tried;
  for (const auto& c : plan.tried) tried.push_back(c.replicas);
  EXPECT_EQ(tried, (std::vector<int>{1, 2, 4, 8, 6, 7}));
  ASSERT_EQ(plan.chosen.size(), 1u);
  const CapacityCandidate& best = plan.tried[plan.chosen[0]];
  EXPECT_EQ(best.replicas, 7);
  EXPECT_TRUE(best.meets_slo);
  EXPECT_NEAR(best.operational_g, best.energy_j / 3.6e6 * 400, 1e-9);
}

// With a 1:1 unit the planner also searches disaggregated deployments: the eight long requests of the test above at
// one request per replica need 7 decode replicas for the same reason (the 8th waits a whole request on a decode
// replica; prefilling 200 tokens takes milliseconds), so the units tried are 1, 2, 4, 8, 6, 7 (2, 4, 8, 16, 12, 14
// GPUs) and the co-located 7 GPUs stay the cheapest.
TEST(Capacity, SearchesDisaggregatedUnitsBesideTheColocatedReplicas) {
  EightLongRequests eight;
  eight.search.prefill_unit = 1, eight.search.decode_unit = 1;
  const CapacityPlan plan = eight.plan();
  std::vector<int> colocated, units, gpus;
  for (const CapacityCandidate& c : plan.tried) {
    if (!c.disaggregated()) {
      colocated.push_back(c.replicas);
      continue;
    }
    EXPECT_EQ(c.replicas, c.decode_replicas);
    units.push_back(c.decode_replicas), gpus.push_back(c.gpus());
  }
  EXPECT_EQ(colocated, (std::vector<int>{1, 2, 4, 8, 6, 7}));
  EXPECT_EQ(units, (std::vector<int>{1, 2, 4, 8, 6, 7}));
  EXPECT_EQ(gpus, (std::vector<int>{2, 4, 8, 16, 12, 14}));
  ASSERT_EQ(plan.chosen.size(), 1u);
  EXPECT_FALSE(plan.tried[plan.chosen[0]].disaggregated());
  EXPECT_EQ(plan.tried[plan.chosen[0]].gpus(), 7);
  // Both pools' GPUs are provisioned: 7 + 7 H100s are two DGX H100s.
  EXPECT_EQ(provisioned_nodes(1, 7 + 7, 8), 2);
}

// Money and power (issue 38 item 5): a deployment's dollars are its GPU-hours at the user's price plus its energy x
// PUE at the kWh price; its provisioned power is whole nodes at their design power (one DGX H100 for up to 8 GPUs).
TEST(Capacity, PricesAreGpuHoursAndEnergyAtTheWall) {
  Deployment d = h100_deployment();
  d.scope.node = NodeCatalog::resolve_bundled("dgx-h100");
  ServingSlo slo;
  slo.ttft_s = 10.0;
  CapacitySearch search;
  search.tensor_parallel = {1, 2};
  search.usd_per_gpu_hour = {{"h100-sxm", 2.5}};
  search.usd_per_kwh = 0.2;
  const CapacityPlan plan = plan_capacity(log_of({{0, 200, 50}, {1, 300, 50}}), {d.gpu}, at_tensor_parallel(d),
                                          default_sim_params(), slo, carbon_at_pue(1.5), search);
  ASSERT_EQ(plan.chosen.size(), 1u);
  const CapacityCandidate& best = plan.tried[plan.chosen[0]];
  EXPECT_EQ(best.gpus(), 1);
  EXPECT_NEAR(best.usd, best.gpu_hours * 2.5 + 0.2 * 1.5 * best.energy_j / 3.6e6, 1e-12);
  EXPECT_EQ(best.nodes, 1);
  EXPECT_DOUBLE_EQ(best.provisioned_w, d.scope.node->design_power_w);
  search.usd_per_kwh = std::nan("");
  EXPECT_THROW(plan_capacity(log_of({{0, 200, 50}}), {d.gpu}, at_tensor_parallel(d), default_sim_params(), slo,
                             carbon_at_pue(1.5), search),
               Error);
  EXPECT_EQ(parse_rank_by("gpu-hours"), RankBy::gpu_hours);
  EXPECT_THROW(parse_rank_by("watts"), Error);
}

// The budget: the doubling-and-bisection search of the test above meets a 1 s TTFT at 8 and 7 replicas of one H100
// (GPU scope: 700 W of TDP each). With 7 x 700 W = 4,900 W the 7-replica deployment is chosen; one watt less and
// nothing is, and exactly the two deployments that met the objectives are marked over it (the misses are not).
TEST(Capacity, APowerBudgetKeepsOnlyDeploymentsProvisionedWithinIt) {
  EightLongRequests eight;
  eight.search.power_budget_w = 7 * 700;
  const CapacityPlan within = eight.plan();
  ASSERT_EQ(within.chosen.size(), 1u);
  EXPECT_EQ(within.tried[within.chosen[0]].replicas, 7);
  EXPECT_DOUBLE_EQ(within.tried[within.chosen[0]].provisioned_w, 4900);
  eight.search.power_budget_w = 7 * 700 - 1;
  const CapacityPlan over = eight.plan();
  EXPECT_TRUE(over.chosen.empty());
  std::vector<int> marked;
  for (const CapacityCandidate& c : over.tried)
    if (c.over_power_budget) marked.push_back(c.replicas);
  EXPECT_EQ(marked, (std::vector<int>{8, 7}));
  // Nodes of 8 GPUs: 4 replicas of TP 6 take 4 nodes (one each), 5 of TP 2 take 2, 2 of TP 16 take 4.
  EXPECT_EQ(provisioned_nodes(6, 4, 8), 4);
  EXPECT_EQ(provisioned_nodes(2, 5, 8), 2);
  EXPECT_EQ(provisioned_nodes(16, 2, 8), 4);
}

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

// Runs `r` alone through `scheduler` to its end; returns the prompt positions it computed (its prefill).
long run_alone(ReplicaScheduler& scheduler, ServedRequest& r) {
  scheduler.enqueue(&r);
  long prefilled = 0;
  for (int iterations = 0; !scheduler.idle() && iterations < 100000; ++iterations) {
    const auto work = scheduler.schedule();
    for (const auto& w : work)
      if (w.request->computed < w.request->prompt_tokens)
        prefilled += std::min(w.positions, w.request->prompt_tokens - w.request->computed);
    scheduler.complete(work);
  }
  return prefilled;
}

ServedRequest turn(long id, uint64_t session, long prompt, long shared, long gen = 5) {
  ServedRequest r;
  r.id = id, r.prompt_tokens = prompt, r.gen_tokens = gen;
  r.prefix_id = session, r.shared_tokens = shared, r.cacheable_tokens = prompt + gen;
  return r;
}

// Issue 38: each request repeats the previous prompt plus 10 tokens; with blocks of one token every request after the
// first prefills exactly its 10 new tokens, and the hit rate is the repeated tokens over all prompt tokens.
TEST(PrefixCache, ARequestRepeatingThePreviousPromptPrefillsOnlyItsNewTokens) {
  ReplicaScheduler scheduler({8, 4096, 1, 100000});
  std::vector<ServedRequest> requests;
  for (int k = 0; k < 6; ++k) requests.push_back(turn(k, 7, 100 + 10 * k, k == 0 ? 0 : 100 + 10 * (k - 1)));
  long queried = 0, repeated = 0;
  for (int k = 0; k < 6; ++k) {
    const long prefilled = run_alone(scheduler, requests[k]);
    EXPECT_EQ(prefilled, k == 0 ? 100 : 10) << k;
    EXPECT_EQ(requests[k].cached_tokens, k == 0 ? 0 : 100 + 10 * (k - 1)) << k;
    queried += requests[k].prompt_tokens;
    repeated += k == 0 ? 0 : 100 + 10 * (k - 1);
  }
  EXPECT_EQ(scheduler.queried_tokens(), queried);
  EXPECT_EQ(scheduler.hit_tokens(), repeated);
  // Caching off: every prompt is prefilled whole.
  ReplicaScheduler off({8, 4096, 1, 100000, false});
  ServedRequest first = turn(0, 7, 100, 0), second = turn(1, 7, 110, 100);
  run_alone(off, first);
  EXPECT_EQ(run_alone(off, second), 110);
}

// Blocks of 16: a hit is whole blocks of the shared prompt, and never the prompt's last token.
TEST(PrefixCache, HitsAreWholeBlocksShortOfTheLastPromptToken) {
  ReplicaScheduler scheduler({8, 4096, 16, 1000});
  ServedRequest a = turn(0, 3, 100, 0), b = turn(1, 3, 120, 100), c = turn(2, 3, 96, 96);
  run_alone(scheduler, a);                       // 100 prompt + 5 generated positions computed: 6 full blocks cached
  EXPECT_EQ(run_alone(scheduler, b), 120 - 96);  // 100 shared tokens: 6 whole blocks (96 tokens) hit
  EXPECT_EQ(run_alone(scheduler, c), 96 - 80);   // all 96 shared, but the last token is computed: 5 blocks hit
  ServedRequest other = turn(3, 4, 120, 100);    // another conversation: nothing of it cached
  EXPECT_EQ(run_alone(scheduler, other), 120);
}

// Issue 38: a cache too small to keep the shared prefix gives no hits. 10 blocks of 16: the first turn leaves 6 full
// blocks cached; an unrelated request of 150 tokens needs all 10 blocks and evicts them; the next turn finds nothing.
// Without the unrelated request it finds all 6.
TEST(PrefixCache, ACacheThatCannotKeepThePrefixGivesNoHits) {
  for (bool evicted : {false, true}) {
    ReplicaScheduler scheduler({8, 4096, 16, 10});
    ServedRequest first = turn(0, 5, 100, 0, 1), later = turn(2, 5, 110, 100, 1);
    ServedRequest big;
    big.id = 1, big.prompt_tokens = 150, big.gen_tokens = 1;
    run_alone(scheduler, first);
    EXPECT_EQ(scheduler.cached_blocks(), 6);
    EXPECT_EQ(scheduler.used_blocks(), 0);  // cached blocks no request holds are free to take
    if (evicted) run_alone(scheduler, big);
    EXPECT_EQ(run_alone(scheduler, later), evicted ? 110 : 110 - 96) << evicted;
    EXPECT_EQ(later.cached_tokens, evicted ? 0 : 96);
  }
}

// A multi-turn log through the replay: caching skips the re-sent turns' prefill, so the same log costs less energy
// and its turns come back sooner; the summary's hit rate is the cached tokens over the prompt tokens.
TEST(PrefixCache, AMultiTurnLogCostsLessWithCaching) {
  RequestLog log;
  log.format = "azure";
  long context = 0, line = 2;
  for (int k = 0; k < 4; ++k) {  // one conversation, turns 20 s apart: 2000-token system prompt, 100 in, 200 out
    const long prompt = (k == 0 ? 2000 : context) + 100;
    LoggedRequest q{20.0 * k, prompt, 200, line++};
    q.session = 11, q.shared_tokens = k == 0 ? 0 : context;
    log.requests.push_back(q);
    context = prompt + 200;
  }
  Deployment on = h100_deployment(), off = h100_deployment();
  off.prefix_caching = false;
  const Replayed cached = run_log(log, on), plain = run_log(log, off);
  EXPECT_LT(cached.totals.busy_energy_j, plain.totals.busy_energy_j);
  for (int k = 1; k < 4; ++k) EXPECT_LT(cached.requests[k].ttft_s(), plain.requests[k].ttft_s()) << k;
  long prompts = 0, hits = 0;
  for (const ServedRequest& r : cached.requests) prompts += r.prompt_tokens, hits += r.cached_tokens;
  EXPECT_EQ(cached.totals.prefix_queried_tokens, prompts);
  EXPECT_EQ(cached.totals.prefix_hit_tokens, hits);
  EXPECT_GT(hits, 0);
  EXPECT_EQ(plain.totals.prefix_hit_tokens, 0);
  // A shared system prompt without sessions (prefix_share): the second of two requests sent far apart hits it.
  ReplayOptions share;
  share.prefix_share = 0.5;
  const Replayed shared = run_log(log_of({{0, 3200, 10}, {30, 3200, 10}}), on, share);
  EXPECT_EQ(shared.requests[0].cached_tokens, 0);
  EXPECT_EQ(shared.requests[1].cached_tokens, 1600);  // 100 blocks of 16
}

// vLLM PR #9668's prefix-caching benchmark (measured there, not fitted here): 200 prompts of 256-512 tokens sent
// twice, 10 output tokens each, all at once, Llama-3-8B-Instruct-FP8 on an L40S: 8.56 s without the cache, 4.86 s
// with it (1.76x), 49% of the prompt tokens hit. The replay of such a log (lengths drawn here, pairs shuffled) keeps
// the speed-up within 5% and the hit rate within the blocks a prompt's last partial block loses (~1/24).
TEST(PrefixCache, VllmsRepeatedPromptBenchmarkSpeedsUpAsMeasured) {
  std::mt19937 rng(0);
  std::uniform_int_distribution<long> length(256, 512);
  std::vector<std::pair<long, int>> sends;  // {prompt, pair}, each pair twice
  for (int i = 0; i < 200; ++i) {
    const long prompt = length(rng);
    sends.push_back({prompt, i}), sends.push_back({prompt, i});
  }
  std::shuffle(sends.begin(), sends.end(), rng);
  RequestLog log;
  log.format = "dataset";
  std::set<int> sent;
  long line = 2;
  for (const auto& [prompt, pair] : sends) {
    LoggedRequest q{std::nullopt, prompt, 10, line++};
    q.session = static_cast<uint64_t>(pair) + 1;
    q.shared_tokens = sent.count(pair) ? prompt : 0;  // the second copy re-sends the whole prompt
    sent.insert(pair);
    log.requests.push_back(q);
  }
  Deployment on;
  on.model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  on.gpu = GpuCatalog::bundled().resolve("l40s");
  on.setup.precision = on.model.precision_for("fp8");
  Deployment off = on;
  off.prefix_caching = false;
  const Replayed cached = run_log(log, on), plain = run_log(log, off);
  EXPECT_NEAR(plain.totals.window_s / cached.totals.window_s, 8.56 / 4.86, 0.05 * 8.56 / 4.86);
  EXPECT_NEAR(cached.totals.prefix_hit_rate(), 0.49, 0.49 / 24 + 0.01);
}

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

// With two replicas, round-robin sends a conversation's second turn to the other replica, whose cache lacks it; the
// session router sends it back to the replica that served the first turn, where it hits.
TEST(PrefixCache, TheSessionRouterSendsATurnToTheReplicaHoldingItsConversation) {
  RequestLog log;
  log.format = "azure";
  LoggedRequest first{0.0, 2000, 50, 2}, second{30.0, 2100, 50, 3};
  first.session = second.session = 21;
  second.shared_tokens = 2050;
  log.requests = {first, second};
  Deployment d = h100_deployment(2);
  const Replayed spread = run_log(log, d);
  EXPECT_NE(spread.requests[0].replica, spread.requests[1].replica);
  EXPECT_EQ(spread.requests[1].cached_tokens, 0);
  d.router = Router::session;
  const Replayed routed = run_log(log, d);
  EXPECT_EQ(routed.requests[0].replica, routed.requests[1].replica);
  EXPECT_EQ(routed.requests[1].cached_tokens, 2048);  // 128 whole blocks of the 2050 shared tokens
  EXPECT_EQ(parse_router("session"), Router::session);
}

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

// A log's CachedTokens (what the API reported cached) are skipped as logged, short of the last prompt token; with
// caching off they are computed.
TEST(PrefixCache, LoggedCachedTokensAreSkippedUnlessCachingIsOff) {
  for (bool caching : {true, false}) {
    ReplicaScheduler scheduler({8, 4096, 16, 1000, caching});
    ServedRequest r, whole;
    r.prompt_tokens = 100, r.gen_tokens = 2, r.forced_cached_tokens = 64;
    whole.prompt_tokens = 100, whole.gen_tokens = 2, whole.forced_cached_tokens = 100;
    EXPECT_EQ(run_alone(scheduler, r), caching ? 36 : 100) << caching;
    EXPECT_EQ(r.cached_tokens, caching ? 64 : 0);
    EXPECT_EQ(run_alone(scheduler, whole), caching ? 1 : 100) << caching;  // the last token's logits are computed
  }
}

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

Deployment staged_deployment(int tp, int stages) {
  Deployment d = h100_deployment();
  d.model = ModelCatalog::bundled().resolve("llama-3.1-70b");
  d.setup.precision = d.model.default_precision;
  d.setup.gpus = tp, d.setup.pipeline_parallel = stages;
  return d;
}

// A lone request through 2 stages is one micro-batch's chain: the isolated simulation (predict) of the same request
// within the replay's 4% step grid, energy of all 8 GPUs included (the idle stage's scheduler draws its GPUs' idle
// power meanwhile).
TEST(PipelineServing, ALoneRequestCostsWhatPredictSays) {
  const Deployment d = staged_deployment(4, 2);
  const Replayed one = run_log(log_of({{0, 512, 64}}), d);
  ASSERT_EQ(one.requests.size(), 1u);
  Request request = d.setup;
  request.prompt_tokens = 512, request.gen_tokens = 64;
  const SimResult alone = simulate(d.model, d.gpu, request, SimScenario{}, default_sim_params());
  EXPECT_EQ(one.totals.gpus_total, 8);
  EXPECT_NEAR(one.requests[0].finish_s / alone.latency_s.total(), 1.0, 0.02);
  EXPECT_NEAR(one.requests[0].first_token_s / alone.latency_s.prefill, 1.0, 0.02);
  EXPECT_NEAR((one.totals.busy_energy_j + one.totals.idle_energy_j) / alone.energy_j.total(), 1.0, 0.02);
}

// vLLM gives each stage's scheduler (virtual engine) max_num_seqs and half the cache's blocks at 2 stages; a block
// holds the KV of the stage's layers only (40 of Llama-3.1-70B's 80 on each GPU).
TEST(PipelineServing, EachStagesSchedulerHasItsShareOfTheBlocks) {
  const SchedulerLimits one = scheduler_limits(staged_deployment(8, 1));
  const Deployment d = staged_deployment(8, 2);
  const SchedulerLimits two = scheduler_limits(d);
  EXPECT_EQ(two.max_num_seqs, one.max_num_seqs);
  // By hand from the memory plans: blocks of the whole pipeline = capacity per GPU / (block bytes per GPU), halved.
  Request probe = d.setup;
  probe.batch = 1, probe.prompt_tokens = 1, probe.gen_tokens = 1;
  const MemoryPlan plan = plan_memory(d.model, probe, d.gpu);
  Request block = probe;
  block.prompt_tokens = 15;
  const double block_bytes = kv_bytes_per_sequence_per_gpu(d.model, block);
  EXPECT_DOUBLE_EQ(block_bytes, 16 * 40 * 1 * 128 * 2 * 2.0);  // 16 tokens x 40 layers x 1 KV head per GPU x K, V
  EXPECT_EQ(two.kv_blocks, static_cast<long>(std::floor(plan.kv_capacity_bytes_per_gpu / block_bytes)) / 2);
  EXPECT_GT(two.kv_blocks, one.kv_blocks);  // the stages' GPUs hold half the weights each
}

// Two requests at once go to the two stages' schedulers, one micro-batch each, every step of each its own: they run
// side by side, not one after the other (serve-sim leaves out their turns at a shared stage: docs/serving.md).
TEST(PipelineServing, TwoRequestsRunAsTwoMicroBatches) {
  const Deployment d = staged_deployment(4, 2);
  const Replayed one = run_log(log_of({{0, 512, 64}}), d);
  const Replayed two = run_log(log_of({{0, 512, 64}, {0, 512, 64}}), d);
  ASSERT_EQ(two.requests.size(), 2u);
  EXPECT_EQ(two.totals.steps, 2 * one.totals.steps);
  for (const ServedRequest& r : two.requests) EXPECT_LT(r.finish_s, 1.5 * one.requests[0].finish_s);
}

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

// 1 prefill and 1 decode replica of one H100 each (or `prefill_replicas`), the link between them given.
Deployment disaggregated(double link_bytes_per_s, double latency_s, int decode_replicas = 1, int prefill_replicas = 1) {
  Deployment d = h100_deployment(prefill_replicas);
  DecodePool pool;
  pool.gpu = d.gpu, pool.setup = d.setup, pool.replicas = decode_replicas;
  pool.link = FabricLink{"test", link_bytes_per_s, latency_s, true};
  d.decode = pool;
  return d;
}

// Llama-3.1-8B's KV cache per token: 32 layers x 8 KV heads x 128 dims x (K, V) x 2 bytes = 131,072 bytes.
constexpr double kLlama8bKvBytesPerToken = 32.0 * 8 * 128 * 2 * 2;

struct StepsByReplica {
  std::vector<StepRecord> steps;
  double busy_s(int replica, bool decodes_only) const {
    double s = 0;
    for (const StepRecord& r : steps)
      if (r.replica == replica && !r.idle && (!decodes_only || r.decodes > 0)) s += r.time_s;
    return s;
  }
};

// The hand test: with a link that costs nothing, a lone request's prefill replica runs exactly the co-located
// run's prefill step, and its decode replica the co-located decode steps, plus one step that recomputes the last prompt
// token (vLLM's decode instance does, for its logits); its first token comes after that step.
TEST(Disaggregated, AFreeLinkRunsTheColocatedPhasesPlusTheLastTokensRecomputation) {
  const RequestLog log = log_of({{0, 512, 64}});
  StepsByReplica colocated, split;
  ReplayOptions o;
  o.on_step = [&](const StepRecord& s) { colocated.steps.push_back(s); };
  const Replayed one = run_log(log, h100_deployment(), o);
  o.on_step = [&](const StepRecord& s) { split.steps.push_back(s); };
  const Replayed two = run_log(log, disaggregated(1e30, 0), o);
  ASSERT_EQ(two.requests.size(), 1u);
  EXPECT_EQ(two.totals.gpus_total, 2);
  EXPECT_EQ(two.totals.kv_transfers, 1);
  EXPECT_DOUBLE_EQ(two.totals.kv_transfer_bytes, 512 * kLlama8bKvBytesPerToken);
  // Replica 0 prefills (one step of 512 tokens, as the co-located first step); replica 1 decodes.
  const double prefill_s = colocated.busy_s(0, false) - colocated.busy_s(0, true);
  EXPECT_NEAR(split.busy_s(0, false), prefill_s, 1e-12);
  EXPECT_NEAR(split.busy_s(1, true), colocated.busy_s(0, true), 1e-12);  // the same steps, summed in another order
  const double recompute_s = split.busy_s(1, false) - split.busy_s(1, true);
  EXPECT_GT(recompute_s, 0.0);
  EXPECT_LT(recompute_s, 1.2 * colocated.busy_s(0, true) / 63);  // one token at a decode step's cost
  EXPECT_NEAR(two.requests[0].first_token_s, prefill_s + recompute_s, 1e-12);
  EXPECT_NEAR(two.requests[0].finish_s, one.requests[0].finish_s + recompute_s, 1e-12);
  EXPECT_EQ(two.requests[0].gen_tokens, 64);
}

// A transfer takes its bytes over the link of the prefill replica's GPUs plus one send's latency: 512 tokens of
// Llama-3.1-8B (67.1 MB) over 400 Gb/s (50 GB/s) in 1.342 ms + 32 us; the first token comes that much later.
TEST(Disaggregated, ATransferIsItsBytesOverTheLinkPlusItsLatency) {
  const double bytes = 512 * kLlama8bKvBytesPerToken;
  const FabricLink ib{"infiniband-ndr", 50e9, 32e-6, true};
  EXPECT_NEAR(kv_transfer_s(bytes, ib, 1, 1), 67'108'864 / 50e9 + 32e-6, 1e-12);
  EXPECT_NEAR(kv_transfer_s(bytes, ib, 4, 2), 67'108'864 / 100e9 + 32e-6, 1e-12);  // 2 NICs at the narrow end
  const RequestLog log = log_of({{0, 512, 64}});
  const Replayed free = run_log(log, disaggregated(1e30, 0));
  const Replayed ndr = run_log(log, disaggregated(50e9, 32e-6));
  EXPECT_NEAR(ndr.requests[0].first_token_s - free.requests[0].first_token_s, 67'108'864 / 50e9 + 32e-6, 1e-9);
  EXPECT_NEAR(ndr.totals.kv_transfer_wait_s, 67'108'864 / 50e9 + 32e-6, 1e-9);
}

// One prefill replica sends one KV cache at a time: two prompts prefilled together reach the decode pool one transfer
// apart (over 8 Gb/s, 1 GB/s, 67.1 ms each): waits of t + L and 2t + L.
TEST(Disaggregated, TransfersFromOnePrefillReplicaQueueOnItsLink) {
  const Replayed r = run_log(log_of({{0, 512, 8}, {0, 512, 8}}), disaggregated(1e9, 1e-3));
  const double t = 512 * kLlama8bKvBytesPerToken / 1e9;
  EXPECT_EQ(r.totals.kv_transfers, 2);
  EXPECT_NEAR(r.totals.kv_transfer_wait_s, (t + 1e-3) + (2 * t + 1e-3), 1e-9);
  EXPECT_NEAR(r.requests[1].first_token_s - r.requests[0].first_token_s, t, 0.01);
}

// Both ends of a transfer move one cache at a time: two prefill replicas sending to one decode replica at once share
// its link, so the two caches (1 GB/s, 67.1 ms each) arrive one transfer apart, as from one prefill replica.
TEST(Disaggregated, TransfersIntoOneDecodeReplicaQueueOnItsLink) {
  const Replayed r = run_log(log_of({{0, 512, 8}, {0, 512, 8}}), disaggregated(1e9, 1e-3, 1, 2));
  const double t = 512 * kLlama8bKvBytesPerToken / 1e9;
  EXPECT_EQ(r.totals.gpus_total, 3);
  EXPECT_NEAR(r.totals.kv_transfer_wait_s, (t + 1e-3) + (2 * t + 1e-3), 1e-9);
}

// A decode replica that holds one request at a time (max_num_seqs 1) reserves the second cache only when the first
// request has finished: the second read starts then (the prefill replica holding its blocks meanwhile), and its first
// token follows after the read (t + L) and its recomputation step.
TEST(Disaggregated, AFullDecodeReplicaDefersTheNextRead) {
  Deployment d = disaggregated(1e9, 1e-3);
  d.max_num_seqs = 1;
  const Replayed r = run_log(log_of({{0, 512, 8}, {0, 512, 8}}), d);
  ASSERT_EQ(r.requests.size(), 2u);
  const double t = 512 * kLlama8bKvBytesPerToken / 1e9;
  const ServedRequest &first = r.requests[0], &second = r.requests[1];
  EXPECT_GE(second.first_token_s, first.finish_s + t + 1e-3);
  EXPECT_LT(second.first_token_s, first.finish_s + t + 1e-3 + 0.02);  // + one one-token step of an 8B model
}

// A one-token request ends where its prompt was computed: no transfer, its token the prefill's.
TEST(Disaggregated, AOneTokenRequestEndsOnItsPrefillReplica) {
  const Replayed split = run_log(log_of({{0, 512, 1}}), disaggregated(1e9, 1e-3));
  const Replayed colocated = run_log(log_of({{0, 512, 1}}), h100_deployment());
  EXPECT_EQ(split.totals.kv_transfers, 0);
  EXPECT_EQ(split.totals.completed, 1);
  EXPECT_DOUBLE_EQ(split.requests[0].finish_s, colocated.requests[0].finish_s);
  EXPECT_DOUBLE_EQ(split.requests[0].first_token_s, colocated.requests[0].first_token_s);
}

// A prompt that fits the prefill replica's cache but not the decode replica's is refused at arrival and counted as
// the decode pool's refusal: 100,000 tokens of Llama-3.1-8B (13.1 GB of KV) on an H100, decoded on an L4 (24 GB,
// 16 GB of weights).
TEST(Disaggregated, ARequestTheDecodePoolCannotHoldIsRefusedAsItsRefusal) {
  Deployment d = disaggregated(1e9, 1e-3);
  d.decode->gpu = GpuCatalog::bundled().resolve("l4");
  const Replayed r = run_log(log_of({{0, 100'000, 8}, {1, 512, 8}}), d);
  EXPECT_EQ(r.totals.rejected, 1);
  EXPECT_EQ(r.totals.rejected_by_decode, 1);
  EXPECT_EQ(r.totals.completed, 1);
}

// vLLM's prefill instance keeps a finished request's blocks until the decode instance has read them: 100 prompt
// tokens hold ceil(100 / 16) = 7 blocks after the prefill, none once sent.
TEST(Disaggregated, APrefillReplicaHoldsTheBlocksUntilTheKvCacheIsSent) {
  SchedulerLimits limits;
  limits.kv_blocks = 64, limits.block_size = 16, limits.prefix_caching = false;
  ReplicaScheduler scheduler(limits);
  ServedRequest r;
  r.prompt_tokens = 100, r.gen_tokens = 20, r.hands_off = true;
  scheduler.enqueue(&r);
  const std::vector<ServedRequest*> done = scheduler.complete(scheduler.schedule());
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(r.generated, 1);
  EXPECT_EQ(scheduler.used_blocks(), 7);
  EXPECT_EQ(scheduler.running(), 0);
  scheduler.sent(r);
  EXPECT_EQ(scheduler.used_blocks(), 0);
}

// A decode replica first reserves the blocks of a received request's KV cache (99 positions and the one it computes:
// 7 blocks) and runs nothing for it while the cache is read (vLLM's WAITING_FOR_REMOTE_KVS); once read, its first
// iteration runs one position (the last prompt token) and samples the first token; nothing counts as a prefix hit.
TEST(Disaggregated, ADecodeReplicaReservesTheCacheThenRecomputesOnlyTheLastPromptToken) {
  SchedulerLimits limits;
  limits.kv_blocks = 64, limits.block_size = 16;
  ReplicaScheduler scheduler(limits);
  ServedRequest r;
  r.prompt_tokens = 100, r.gen_tokens = 3, r.received_tokens = 99, r.remote_kv = true;
  scheduler.enqueue(&r);
  EXPECT_TRUE(scheduler.schedule().empty());
  EXPECT_EQ(scheduler.take_loads(), std::vector<ServedRequest*>{&r});
  EXPECT_EQ(scheduler.used_blocks(), 7);  // the received 99 positions and the recomputed one
  EXPECT_EQ(scheduler.unfinished(), 1);
  EXPECT_TRUE(scheduler.schedule().empty());  // still reading
  scheduler.loaded(r);
  const std::vector<ScheduledWork> first = scheduler.schedule();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].positions, 1);
  EXPECT_EQ(scheduler.used_blocks(), 7);
  scheduler.complete(first);
  EXPECT_EQ(r.generated, 1);
  EXPECT_EQ(scheduler.queried_tokens(), 0);
  EXPECT_EQ(scheduler.hit_tokens(), 0);
}

// Between the pools: one H100 NVLink domain holds 1:1 replicas of 4 GPUs (NVLink 4, 450 GB/s per direction, 3 us);
// 2:2 of 4 (16 GPUs) span DGX H100s (400 Gb/s NDR per GPU, 32 us); an H100 prefill pool and an A100 decode pool meet
// on the slower network, the DGX A100's 200 Gb/s HDR per GPU (data/nodes).
TEST(Disaggregated, ThePoolsMeetOverNvlinkWithinADomainElseTheNodesNetwork) {
  Deployment d = h100_deployment();
  d.setup.gpus = 4;
  const FabricLink nvlink = link_between_pools(d, 1, d.gpu, 4);
  EXPECT_FALSE(nvlink.spans_nodes);
  EXPECT_DOUBLE_EQ(nvlink.bytes_per_s_per_gpu, 450e9);
  EXPECT_DOUBLE_EQ(nvlink.latency_s, 3e-6);
  d.replicas = 2;
  const FabricLink ndr = link_between_pools(d, 2, d.gpu, 4);
  EXPECT_TRUE(ndr.spans_nodes);
  EXPECT_DOUBLE_EQ(ndr.bytes_per_s_per_gpu, 400e9 / 8);
  EXPECT_DOUBLE_EQ(ndr.latency_s, 32e-6);
  const FabricLink hdr = link_between_pools(d, 1, GpuCatalog::bundled().resolve("a100-80gb-sxm"), 4);
  EXPECT_DOUBLE_EQ(hdr.bytes_per_s_per_gpu, 200e9 / 8);
}

// Speculation and pipeline stages within a pool are not modelled with disaggregation: refused, naming the flags.
TEST(Disaggregated, UnmodelledCombinationsAreRefused) {
  Deployment staged = disaggregated(50e9, 32e-6);
  staged.setup.pipeline_parallel = 2;
  EXPECT_THROW(
      {
        try {
          run_log(log_of({{0, 64, 4}}), staged);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("--disaggregate with --pp"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
}

}  // namespace
}  // namespace llmco2
