// The prepared paths of the simulator (SetupSimulator, label_plan, MixedStepWorkloads) against the references
// (simulate, label_plan_by_row, mixed_step_workload): the same labels and serving steps to the bit over every bundled
// model, several GPUs, GPU counts, engines, batches and lengths.
#include <gtest/gtest.h>

#include <array>
#include <optional>

#include <fmt/format.h>

#include "core/error.h"
#include "dataset/dataset_csv.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"
#include "sim/label.h"
#include "sim/simulator.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

const SimParams& params() {
  static const SimParams p = load_sim_params(default_sim_params_path());
  return p;
}

void expect_same_result(const SimResult& a, const SimResult& b, const std::string& where) {
  EXPECT_EQ(a.energy_j.prefill, b.energy_j.prefill) << where;
  EXPECT_EQ(a.energy_j.decode, b.energy_j.decode) << where;
  EXPECT_EQ(a.latency_s.prefill, b.latency_s.prefill) << where;
  EXPECT_EQ(a.latency_s.decode, b.latency_s.decode) << where;
  EXPECT_EQ(a.mean_power_w, b.mean_power_w) << where;
  EXPECT_EQ(a.gpus, b.gpus) << where;
}

// Batch, prompt, gen: one token, a decode-heavy and a prefill-heavy request, a batch whose KV cache runs in waves on
// most setups, and one past most context windows (rejected by both paths alike).
constexpr std::array<std::array<long, 3>, 6> kCounts = {
    {{1, 1, 1}, {1, 128, 1024}, {8, 4000, 64}, {64, 1024, 256}, {2048, 8000, 4000}, {1, 200000, 100}}};

// Simulates every request of kCounts on the setup both ways; returns how many ran (not rejected).
int compare_setup(const ModelSpec& model, const Gpu& gpu, const Request& setup, const SimScenario& scenario,
                  const std::string& name) {
  std::optional<SetupSimulator> fast;
  try {
    fast.emplace(model, gpu, setup, scenario, params());
  } catch (const Error&) {
    return 0;  // this model cannot run on this many GPUs
  }
  int ran = 0;
  for (const auto& [batch, prompt, gen] : kCounts) {
    Request r = setup;
    r.batch = batch, r.prompt_tokens = prompt, r.gen_tokens = gen;
    const std::string where = fmt::format("{} {}/{}/{}", name, batch, prompt, gen);
    std::string fast_error, reference_error;
    SimResult a, b;
    try {
      a = fast->simulate(r);
    } catch (const Error& e) {
      fast_error = e.what();
    }
    try {
      b = simulate(model, gpu, r, scenario, params());
    } catch (const Error& e) {
      reference_error = e.what();
    }
    EXPECT_EQ(fast_error, reference_error) << where;
    if (!reference_error.empty()) continue;
    expect_same_result(a, b, where);
    ++ran;
  }
  return ran;
}

TEST(SetupSimulator, SimulatesEveryRequestOfASetupAsSimulateDoes) {
  int ran = 0;
  for (const auto& entry : ModelCatalog::bundled().entries()) {
    const ModelSpec model = ModelCatalog::bundled().resolve(entry.id);
    for (const std::string gpu_id : {"a100-80gb-sxm", "h100-sxm", "l4", "mi300x"}) {
      const Gpu gpu = GpuCatalog::bundled().resolve(gpu_id);
      for (int gpus : {1, 2, 8})
        for (const std::string engine : {"vllm", "hf-transformers", "trt-llm"}) {
          Request setup;
          setup.gpus = gpus, setup.engine = engine;
          setup.precision = engine_precision(gpu, model.precision_for(""), engine).precision;
          SimScenario scenario;
          ran +=
              compare_setup(model, gpu, setup, scenario, fmt::format("{} {} x{} {}", entry.id, gpu_id, gpus, engine));
        }
    }
  }
  EXPECT_GT(ran, 5000);
}

// Eager attention, a power cap, data parallelism, and the scenarios the prepared path hands to simulate (steady state,
// no KV cache).
TEST(SetupSimulator, OtherScenariosAsSimulateDoes) {
  const ModelSpec model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  const Gpu gpu = GpuCatalog::bundled().resolve("a100-80gb-sxm");
  Request setup;
  setup.precision = model.precision_for("");
  SimScenario capped;
  capped.power.cap_w = 250, capped.data_parallel = 2;
  SimScenario steady;
  steady.measures = Measures::steady_state, steady.gen_tokens_cv = 0.5;
  SimScenario no_cache;
  no_cache.kv_cache = false;
  SimScenario ran_to_cap;  // a batch run to its cap of 2,000 tokens: more decode steps than gen - 1 for every request
  ran_to_cap.measures = Measures::fixed_batch, ran_to_cap.decode_steps = 1999;
  int ran = compare_setup(model, gpu, setup, capped, "capped");
  ran += compare_setup(model, gpu, setup, steady, "steady");
  ran += compare_setup(model, gpu, setup, no_cache, "no cache");
  ran += compare_setup(model, gpu, setup, ran_to_cap, "ran to cap");
  setup.flash_attention = false;
  ran += compare_setup(model, gpu, setup, SimScenario{}, "eager");
  EXPECT_EQ(ran, 5 * 5);  // all but the request beyond the 128k window
}

// A plan mixing setups, rows that fail on their own (a zero batch, a context beyond the window) and setups that fail
// (an unknown model, a GPU count the heads do not split into): label_plan gives label_plan_by_row's rows (same CSV,
// same doubles, noise repeats included) and rejects (same lines and messages) in the same order.
TEST(LabelPlan, GroupedBySetupEqualsRowByRow) {
  std::vector<PlanRow> plan;
  long line = 2;
  for (long batch : {1L, 8L, 0L, 64L})
    for (const char* model : {"llama-3.1-8b", "mixtral-8x7b", "gemma-2-9b", "no-such-model", "deepseek-v3.1"})
      for (int gpus : {1, 3, 4})
        for (long prompt : {100L, 2000L, 300000L})
          plan.push_back({line++, model, gpus == 3 ? "h100-sxm" : "a100-80gb-sxm", gpus, batch, prompt, 50,
                          batch == 8 ? "fp8" : "", batch == 64 ? "hf-transformers" : ""});
  for (int repeats : {1, 3}) {
    const LabelOptions options{repeats, 7, "mix", false};
    const LabelledPlan fast = label_plan(plan, params(), options);
    const LabelledPlan reference = label_plan_by_row(plan, params(), options);
    ASSERT_EQ(fast.rows.size(), reference.rows.size());
    EXPECT_EQ(dataset_to_csv(fast.rows), dataset_to_csv(reference.rows));
    for (size_t i = 0; i < fast.rows.size(); ++i) {
      EXPECT_EQ(fast.rows[i].energy_j.total, reference.rows[i].energy_j.total) << i;
      EXPECT_EQ(fast.rows[i].latency_s.prefill, reference.rows[i].latency_s.prefill) << i;
      EXPECT_EQ(fast.rows[i].energy_spread, reference.rows[i].energy_spread) << i;
    }
    ASSERT_EQ(fast.rejects.size(), reference.rejects.size());
    for (size_t i = 0; i < fast.rejects.size(); ++i)
      EXPECT_EQ(fast.rejects[i].message(), reference.rejects[i].message());
    EXPECT_GT(fast.rows.size(), 40u);
    EXPECT_GT(fast.rejects.size(), 100u);  // zero batches, the unknown model, 3 GPUs, 300k-token prompts
  }
}

// Serving steps: decodes alone at short and long contexts, a prompt chunk alone (with and without a cached prefix),
// mixed steps with finishing chunks, an 8192-token step (beyond small context windows: not a position) and a decode
// context beyond most windows (rejected by both paths alike).
std::vector<MixedStep> serving_steps() {
  std::vector<MixedStep> steps;
  auto add = [&](long decodes, double context, long tokens, long chunks, double prefix, long logits) {
    MixedStep s;
    s.decodes = decodes, s.decode_context = context, s.prefill_tokens = tokens, s.prefill_chunks = chunks;
    s.prefill_context = prefix, s.logits = logits;
    steps.push_back(s);
  };
  add(1, 10, 0, 0, 0, 1);
  add(256, 3000.5, 0, 0, 0, 256);
  add(0, 0, 512, 1, 0, 1);
  add(0, 0, 2048, 3, 900, 0);
  add(64, 700, 1500, 2, 300, 65);
  add(8, 1, 8192, 1, 0, 9);
  add(1, 250000, 0, 0, 0, 1);
  return steps;
}

// Every kernel (count, work, sampler) and the timed result of both workloads, bit for bit.
void expect_same_step(const SimWorkload& a, const SimWorkload& b, const std::string& where) {
  ASSERT_EQ(a.decode.size(), 1u) << where;
  ASSERT_EQ(b.decode.size(), 1u) << where;
  const SimSegment &x = a.decode[0], &y = b.decode[0];
  EXPECT_EQ(x.step_tokens, y.step_tokens) << where;
  EXPECT_EQ(x.sequences, y.sequences) << where;
  ASSERT_EQ(x.kernels.size(), y.kernels.size()) << where;
  for (size_t i = 0; i < x.kernels.size(); ++i) {
    const KernelWork &u = x.kernels[i].work, &v = y.kernels[i].work;
    EXPECT_EQ(x.kernels[i].count, y.kernels[i].count) << where << " kernel " << i;
    EXPECT_EQ(x.kernels[i].sampler, y.kernels[i].sampler) << where << " kernel " << i;
    EXPECT_TRUE(u.kind == v.kind && u.ops == v.ops && u.mem_bytes == v.mem_bytes && u.net_bytes == v.net_bytes &&
                u.rows == v.rows && u.peak_ops_per_s == v.peak_ops_per_s && u.dequant_ops == v.dequant_ops)
        << where << " kernel " << i;
  }
  expect_same_result(run_workload(a, params()), run_workload(b, params()), where);
}

TEST(MixedStepWorkloads, EveryStepAsMixedStepWorkloadBuildsIt) {
  int compared = 0, rejected = 0;
  SamplingMode penalties;
  penalties.penalties = true;
  for (const auto& entry : ModelCatalog::bundled().entries()) {
    const ModelSpec model = ModelCatalog::bundled().resolve(entry.id);
    for (const std::string gpu_id : {"h100-sxm", "l4"}) {
      const Gpu gpu = GpuCatalog::bundled().resolve(gpu_id);
      for (int gpus : {1, 2}) {
        Request setup;
        setup.gpus = gpus;
        setup.precision = engine_precision(gpu, model.precision_for(""), setup.engine).precision;
        setup.flash_attention = gpus == 1;
        std::optional<MixedStepWorkloads> fast;
        try {
          fast.emplace(model, gpu, setup, penalties);
        } catch (const Error&) {
          continue;  // heads the GPUs do not split
        }
        for (const MixedStep& step : serving_steps()) {
          const std::string where =
              fmt::format("{} {} x{} step {}+{}", entry.id, gpu_id, gpus, step.decodes, step.prefill_tokens);
          std::string fast_error, reference_error;
          std::optional<SimWorkload> reference;
          try {
            reference = mixed_step_workload(model, gpu, setup, step, penalties);
          } catch (const Error& e) {
            reference_error = e.what();
          }
          try {
            const SimWorkload& w = fast->workload(step);
            if (reference) expect_same_step(w, *reference, where);
          } catch (const Error& e) {
            fast_error = e.what();
          }
          EXPECT_EQ(fast_error, reference_error) << where;
          ++(reference ? compared : rejected);
        }
      }
    }
  }
  EXPECT_GT(compared, 1500);
  EXPECT_GT(rejected, 50);  // the 250,000-token context
}

}  // namespace
}  // namespace llmco2
