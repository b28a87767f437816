// cli/predictor_flags.cc - predictor selection shared by predict, trace and compare.
#include "cli/predictor_flags.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace llmco2::cli {

void add_predictor_flags(CLI::App& c, api::Request& r, api::Settings& s) {
  c.add_option("--predictor", r.predictor,
               "which predictor answers: " + fmt::format("{}", fmt::join(api::predictor_names(), ", ")) +
                   " (sim, the calibrated simulator, is the default; docs/predictor.md)")
      ->check(CLI::IsMember(api::predictor_names()))
      ->capture_default_str();
  c.add_option("--model-file", s.model_file, "a model file written by llmco2 train (overrides --predictor)");
  c.add_option("--params", s.params, "simulator parameters (default: data/sim/params.json)");
  c.add_option("--site", s.site,
               "a site profile (site-NAME.json, written by llmco2 calibrate --site) correcting the parameters for "
               "your GPUs and engines");
}

}  // namespace llmco2::cli
