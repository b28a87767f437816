// cli/cmd_predict.cc - `llmco2 predict`: prefill, decode and total energy and latency of a request, from the bundled
// LLMCO2 model (Eigen, no libtorch) or another predictor.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/request_flags.h"
#include "core/error.h"
#include "core/paths.h"
#include "predictor/predictor.h"

namespace llmco2::cli {
namespace {

struct PredictOptions {
  std::string predictor = "llmco2", model_file, format = "table", params;
};

std::unique_ptr<Predictor> choose_predictor(const PredictOptions& o, const SimParams& params) {
  if (!o.model_file.empty()) return load_predictor(o.model_file, params);
  if (o.predictor == "sim") return make_sim_predictor(params);
  const auto bundled = data_dir() / "predictors" / (o.predictor + ".model");
  if (!std::filesystem::exists(bundled))
    fail("no bundled model for --predictor {} ({} is missing); train one with llmco2 train --predictor {} and pass "
         "--model-file",
         o.predictor, bundled.string(), o.predictor);
  return load_predictor(bundled, params);
}

Json phase_json(const PhaseValues& v) {
  Json j = Json::object();
  if (v.prefill) j["prefill"] = *v.prefill;
  if (v.decode) j["decode"] = *v.decode;
  if (v.total) j["total"] = *v.total;
  return j;
}

std::string cell(const std::optional<double>& v) { return v ? fmt::format("{:.4g}", *v) : std::string("-"); }

void print(const ResolvedRequest& r, const Predictor& predictor, const Prediction& p, const std::string& format) {
  if (format == "json") {
    Json j = request_json(r);
    j["predictor"] = predictor.name();
    j["energy_j"] = phase_json(p.energy_j);
    j["latency_s"] = phase_json(p.latency_s);
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << request_line(r) << "; predictor " << predictor.name() << "\n";
  std::cout << fmt::format("  {:<8} {:>12} {:>12}\n", "phase", "energy_j", "latency_s");
  std::cout << fmt::format("  {:<8} {:>12} {:>12}\n", "prefill", cell(p.energy_j.prefill), cell(p.latency_s.prefill));
  std::cout << fmt::format("  {:<8} {:>12} {:>12}\n", "decode", cell(p.energy_j.decode), cell(p.latency_s.decode));
  std::cout << fmt::format("  {:<8} {:>12} {:>12}\n", "total", cell(p.energy_j.total), cell(p.latency_s.total));
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto* command = app.add_subcommand("predict", "predict a request's prefill, decode and total energy and latency");
  auto flags = std::make_shared<RequestFlags>();
  auto o = std::make_shared<PredictOptions>();
  add_request_flags(*command, *flags);
  command->add_option("--predictor", o->predictor, "llmco2 (default), nnlqp, deepen, llmcarbon or sim")
      ->check(CLI::IsMember({"llmco2", "llmco2-log", "phases", "nnlqp", "deepen", "llmcarbon", "sim"}))
      ->capture_default_str();
  command->add_option("--model-file", o->model_file, "a model file written by llmco2 train (overrides --predictor)");
  command->add_option("--format", o->format, "table or json")->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  command->add_option("--params", o->params, "simulator parameters (default: data/sim/params.json)");
  command->callback([=] {
    const ResolvedRequest r = resolve_request(*flags);
    const SimParams params =
        load_sim_params(o->params.empty() ? default_sim_params_path() : std::filesystem::path(o->params));
    const auto predictor = choose_predictor(*o, params);
    SimConfig config;
    config.model = std::make_shared<const ModelSpec>(r.model);
    config.gpu = std::make_shared<const Gpu>(r.gpu);
    config.request = r.request;
    config.scenario.measures = r.request.batch > 1 ? Measures::fixed_batch : Measures::isolated;
    print(r, *predictor, predictor->predict(config), o->format);
  });
}

}  // namespace llmco2::cli
