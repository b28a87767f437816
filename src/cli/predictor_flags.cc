// cli/predictor_flags.cc - predictor selection shared by predict, trace and compare.
#include "cli/predictor_flags.h"

#include "api/resolve.h"

namespace llmco2::cli {

void add_predictor_flags(CLI::App& c, api::Request& r, api::Settings& s) {
  c.add_option("--predictor", r.predictor, "sim (default: the calibrated simulator), llmco2 (the GNN), nnlqp, deepen or llmcarbon")
      ->check(CLI::IsMember(api::predictor_names()))
      ->capture_default_str();
  c.add_option("--model-file", s.model_file, "a model file written by llmco2 train (overrides --predictor)");
  c.add_option("--params", s.params, "simulator parameters (default: data/sim/params.json)");
}

}  // namespace llmco2::cli
