// serving/step_cost.cc - memoised iteration costs on a geometric grid of step shapes.
#include "serving/step_cost.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace llmco2::serving {

long step_grid_cell(double value) {
  if (value < static_cast<double>(kExactBelow)) return std::max(0L, std::lround(value));
  const double steps = std::log(value / static_cast<double>(kExactBelow)) / std::log(kStepGridRatio);
  return kExactBelow + static_cast<long>(std::floor(steps));
}

double step_grid_value(long cell) {
  if (cell < kExactBelow) return static_cast<double>(cell);
  return static_cast<double>(kExactBelow) * std::pow(kStepGridRatio, static_cast<double>(cell - kExactBelow) + 0.5);
}

namespace {

// The largest step `engine` replays as a CUDA graph; an unknown engine's steps fail in mixed_step_workload, which
// names it.
long graph_max_tokens(const SimParams& params, const std::string& engine) {
  try {
    return params.engines.get(engine).graph_max_tokens;
  } catch (const Error&) {
    return 0;
  }
}

}  // namespace

StepCostModel::StepCostModel(ModelSpec model, Gpu gpu, Request setup, SimParams params, SamplingMode sampling,
                             PowerSetting power, const ModelSpec* draft)
    : model_(std::move(model)),
      gpu_(std::move(gpu)),
      setup_(std::move(setup)),
      params_(std::move(params)),
      sampling_(sampling),
      power_(power),
      graph_max_tokens_(graph_max_tokens(params_, setup_.engine)) {
  if (draft) draft_ = *draft;
  try {
    steps_ = std::make_unique<MixedStepWorkloads>(model_, gpu_, setup_, sampling_, power_, draft_ ? &*draft_ : nullptr);
  } catch (const Error&) {
    steps_.reset();
  }
}

StepCostModel::~StepCostModel() = default;

namespace {

// Six grid cells and a flag packed in 64 bits: decodes (exact up to 2^12), chunks (2^11) and finishing chunks
// (2^10), contexts and tokens (cells), and whether the step replays a CUDA graph.
uint64_t shape_key(long decodes, long context, long tokens, long chunks, long prefix, long logits, bool graphed) {
  auto field = [](long v, int bits) { return static_cast<uint64_t>(std::clamp(v, 0L, (1L << bits) - 1)); };
  return field(decodes, 12) | field(context, 10) << 12 | field(tokens, 10) << 22 | field(chunks, 11) << 32 |
         static_cast<uint64_t>(graphed) << 43 | field(prefix, 10) << 44 | field(logits, 10) << 54;
}

}  // namespace

SimResult StepCostModel::simulate_step(const MixedStep& step) {
  if (!steps_)
    return run_workload(mixed_step_workload(model_, gpu_, setup_, step, sampling_, power_, draft_ ? &*draft_ : nullptr),
                        params_);
  const SimWorkload& w = steps_->workload(step);
  if (!resolved_) resolved_ = std::make_unique<ResolvedParams>(resolve_params(w, params_));
  return run_workload(w, *resolved_);
}

StepCost StepCostModel::cost(const MixedStep& step) {
  ++calls_;
  const long context = step.decodes > 0 ? step_grid_cell(step.decode_context) : 0;
  const long tokens = step_grid_cell(static_cast<double>(step.prefill_tokens));
  const long prefix = step.prefill_tokens > 0 ? step_grid_cell(step.prefill_context) : 0;
  const long finishing = step.logits - step.decodes * step.decode_positions;  // chunks that end their prompt
  // A cell may straddle the largest step the engine replays as a CUDA graph (vLLM: 512 tokens); its representative
  // stays on the step's side of it, or a 512-token prefill would be priced as 524 tokens of eager launches.
  const long decode_rows = step.decodes * step.decode_positions;
  const bool graphed = decode_rows + step.prefill_tokens <= graph_max_tokens_;
  const ShapeKey key{shape_key(step.decodes, context, tokens, step.prefill_chunks, prefix, finishing, graphed),
                     static_cast<uint64_t>(step.decode_positions) << 32 |
                         static_cast<uint64_t>(std::lround(step.draft_passes * 1024))};
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  MixedStep at = step;  // the cell's representative shape: equal keys give equal costs
  at.decode_context = std::max(1.0, step_grid_value(context));
  at.prefill_tokens = std::lround(step_grid_value(tokens));
  if (graphed) at.prefill_tokens = std::min(at.prefill_tokens, graph_max_tokens_ - decode_rows);
  else at.prefill_tokens = std::max(at.prefill_tokens, graph_max_tokens_ + 1 - decode_rows);
  at.prefill_context = step_grid_value(prefix);
  const SimResult r = simulate_step(at);
  StepCost c;
  c.time_s = r.latency_s.total();
  // Per GPU of the step's scheduler: their idle power and the step's whole work (with stages, the other stages'
  // schedulers draw their own GPUs' idle power meanwhile; 1 stage: the energy over the GPUs).
  const double all_idle_w = gpu_.idle_w * static_cast<double>(setup_.total_gpus());
  c.power_w = c.time_s > 0 ? gpu_.idle_w + (r.energy_j.total() / c.time_s - all_idle_w) / setup_.gpus : gpu_.idle_w;
  memo_.emplace(key, c);
  return c;
}

}  // namespace llmco2::serving
