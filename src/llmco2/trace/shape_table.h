// trace/shape_table.h - predictions for many requests of one setup (model, GPU, GPU count, batch, precision): the
// requests share the setup's graph structure and differ only in their shape (prompt, gen). Shapes are read off a table
// of predictions on a log-spaced grid of token counts (every count up to 32, then steps of `grid_ratio`), bilinearly
// interpolated in log-log space; grid_ratio = 1 predicts every distinct shape exactly.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "predictor/predictor.h"
#include "trace/module.h"

namespace llmco2::trace {

struct Shape {
  long prompt_tokens = 0;
  long gen_tokens = 0;
};

class ShapeTable {
 public:
  // `base` gives everything but the tokens; the predictor must outlive the table.
  ShapeTable(const Predictor& predictor, PredictorInput base, double grid_ratio);

  // Largest prompt + gen the setup serves (context window and GPU memory); longer shapes are not valid.
  long max_total_tokens() const { return max_total_tokens_; }
  bool valid(const Shape& shape) const;

  // Predicts, in one batch, every grid node the valid `shapes` need. `progress` draws a progress line.
  void prepare(const std::vector<Shape>& shapes, bool progress);
  // The prediction for a valid shape that was prepared (the batch's energies and latencies).
  Prediction at(const Shape& shape) const;

  size_t predictions_made() const { return nodes_.size(); }

 private:
  struct Bracket {
    long low = 0, high = 0;
  };
  Bracket bracket(long tokens) const;
  static uint64_t key(long prompt, long gen) {
    return (static_cast<uint64_t>(prompt) << 32) | static_cast<uint64_t>(gen);
  }
  bool exact(const Shape& shape) const;

  const Predictor& predictor_;
  PredictorInput base_;
  double grid_ratio_;
  long max_total_tokens_ = 0;
  std::unordered_map<uint64_t, Prediction> nodes_;
  std::unordered_set<uint64_t> exact_shapes_;  // shapes whose grid corners fall outside the valid range
};

}  // namespace llmco2::trace
