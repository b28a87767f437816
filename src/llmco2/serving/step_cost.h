// serving/step_cost.h - how long one engine iteration of a deployment takes and what each GPU draws meanwhile, from
// the simulator's physics (sim/simulator.h mixed_step_workload), memoised on a grid of step shapes so that a long log
// costs one simulation per distinct shape, not per step.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>

#include "graph/request.h"
#include "hardware/gpu.h"
#include "model/model_spec.h"
#include "serving/module.h"
#include "sim/sim_params.h"
#include "sim/simulator.h"

namespace llmco2::serving {

struct StepCost {
  double time_s = 0;   // wall time of the iteration
  double power_w = 0;  // per GPU of the replica, between idle and the TDP (with stages: see below)
};
// With pipeline stages a step is one micro-batch's pass through every stage (the chain: its kernels one stage after
// another and the sends between them), run by one of the replica's schedulers (one per stage, vLLM's virtual
// engines), which counts as `gpus` GPUs: their idle power and the pass's whole work and waits (its power per GPU may
// then exceed the board's limit: it carries the other stages' part), while the other schedulers' GPUs draw their idle
// power. A lone request costs what predict says; micro-batches in flight together each pay their own GPUs' waits (an
// over-count of at most the wait share of the dynamic range over the bubble).

// Relative width of the grid cells of contexts and token counts (a cell holds values within ~4% of each other;
// counts up to kExactBelow are exact). A step's cost moves by far less than that across a cell.
inline constexpr double kStepGridRatio = 1.04;
inline constexpr long kExactBelow = 64;

// The grid cell of a count or context, and the value that stands for the whole cell (its geometric centre).
long step_grid_cell(double value);
double step_grid_value(long cell);

class StepCostModel {
 public:
  // `setup`: GPUs (tensor parallel), precision, engine and attention kernel of one replica; `sampling`: the sampler's
  // work per sampled sequence (penalties add passes over the vocabulary); `power`: each GPU's cap and locked clock.
  // `draft`: the model of a speculative deployment's draft passes (null: none on the GPU).
  StepCostModel(ModelSpec model, Gpu gpu, Request setup, SimParams params, SamplingMode sampling = {},
                PowerSetting power = {}, const ModelSpec* draft = nullptr);
  ~StepCostModel();
  StepCostModel(const StepCostModel&) = delete;  // steps_ refers to its members
  StepCostModel& operator=(const StepCostModel&) = delete;
  StepCost cost(const MixedStep& step);
  long distinct_shapes() const { return static_cast<long>(memo_.size()); }
  long calls() const { return calls_; }

 private:
  SimResult simulate_step(const MixedStep& step);  // the step's workload, timed and powered

  ModelSpec model_;
  Gpu gpu_;
  Request setup_;
  SimParams params_;
  SamplingMode sampling_;
  PowerSetting power_;     // each GPU's power limit and locked clock
  long graph_max_tokens_;  // the largest step the engine replays as a CUDA graph
  // The setup's prepared steps and parameters; null steps_: the setup is invalid, and every step goes through
  // mixed_step_workload, which says why.
  std::unique_ptr<MixedStepWorkloads> steps_;
  std::unique_ptr<ResolvedParams> resolved_;
  std::optional<ModelSpec> draft_;
  // Key: the step's grid cells packed in 64 bits, and its speculation (verified positions per decode, draft passes).
  struct ShapeKey {
    uint64_t cells = 0, speculation = 0;
    bool operator==(const ShapeKey&) const = default;
  };
  struct ShapeKeyHash {
    size_t operator()(const ShapeKey& k) const {
      return std::hash<uint64_t>{}(k.cells ^ (k.speculation * 0x9e3779b97f4a7c15ull));
    }
  };
  std::unordered_map<ShapeKey, StepCost, ShapeKeyHash> memo_;
  long calls_ = 0;
};

}  // namespace llmco2::serving
