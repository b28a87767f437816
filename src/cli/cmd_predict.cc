// cli/cmd_predict.cc - `llmco2 predict`: prefill, decode and total energy, latency and carbon (operational and
// embodied) of a request, with 80% intervals, from the bundled LLMCO2 model (Eigen, no libtorch) or another predictor.
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "cli/carbon_flags.h"
#include "cli/commands.h"
#include "cli/predictor_flags.h"
#include "cli/request_flags.h"

namespace llmco2::cli {
namespace {

struct PredictOptions {
  std::string format = "table";
  double power_cap_w = 0;
};

// The figures serving benchmarks quote, so that answers compare directly with them.
struct ServingFigures {
  std::optional<double> ttft_s, tpot_s;
  double tokens_per_s = 0, energy_per_1k_output_tokens_j = 0;
};

// `energy_j`: the footprint's (in its scope).
ServingFigures serving_figures(const Request& request, const Prediction& p, const PhaseValues& energy_j) {
  ServingFigures s;
  const double output_tokens = static_cast<double>(request.batch * request.gen_tokens);
  s.ttft_s = p.latency_s.prefill;
  if (p.latency_s.decode && request.gen_tokens > 1)
    s.tpot_s = *p.latency_s.decode / static_cast<double>(request.gen_tokens - 1);
  if (p.latency_s.total && *p.latency_s.total > 0) s.tokens_per_s = output_tokens / *p.latency_s.total;
  if (energy_j.total) s.energy_per_1k_output_tokens_j = *energy_j.total / output_tokens * 1000;
  return s;
}

Json serving_json(const ServingFigures& s, const Prediction& p) {
  Json j;
  j["ttft_s"] = s.ttft_s ? Json(*s.ttft_s) : Json();
  j["tpot_s"] = s.tpot_s ? Json(*s.tpot_s) : Json();
  j["output_tokens_per_s"] = s.tokens_per_s;
  j["energy_per_1k_output_tokens_j"] = s.energy_per_1k_output_tokens_j;
  j["energy_per_1k_output_tokens_wh"] = s.energy_per_1k_output_tokens_j / 3600;
  j["bounded"] = p.bounded;
  j["bounded_why"] = p.notes;
  return j;
}

std::string serving_line(const ServingFigures& s) {
  auto ms = [](const std::optional<double>& v) { return v ? fmt::format("{:.1f} ms", *v * 1e3) : std::string("-"); };
  return fmt::format("  time to first token {}, time per output token {}, {:.1f} output tokens/s, {:.1f} J ({:.3f} Wh) "
                     "per 1,000 output tokens\n",
                     ms(s.ttft_s), ms(s.tpot_s), s.tokens_per_s, s.energy_per_1k_output_tokens_j,
                     s.energy_per_1k_output_tokens_j / 3600);
}

void print(const ResolvedRequest& r, const LoadedPredictor& p, const CarbonInputs& carbon, const Prediction& prediction,
           const Footprint& f, const std::string& format) {
  const ServingFigures serving = serving_figures(r.request, prediction, f.energy_j);
  if (format == "json") {
    Json j = request_json(r);
    j["predictor"] = p.predictor->name();
    j.update(footprint_json(f, p.band_level));
    j.update(serving_json(serving, prediction));
    j.update(carbon_inputs_json(carbon));
    j["interval_note"] = p.bands_note;
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << request_line(r) << "; predictor " << p.predictor->name() << "\n"
            << footprint_table(f) << serving_line(serving);
  for (const auto& note : prediction.notes) std::cout << "  bounded to the power envelope: " << note << "\n";
  std::cout << carbon_inputs_lines(carbon) << "  " << p.bands_note << "\n";
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "predict", "predict a request's prefill, decode and total energy, latency and CO2 (operational and embodied)");
  auto flags = std::make_shared<RequestFlags>();
  auto predictor_flags = std::make_shared<PredictorFlags>();
  auto carbon_flags = std::make_shared<CarbonFlags>();
  auto o = std::make_shared<PredictOptions>();
  add_request_flags(*command, *flags);
  add_predictor_flags(*command, *predictor_flags);
  add_carbon_flags(*command, *carbon_flags);
  command->add_option("--format", o->format, "table or json")->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  command->add_option("--power-cap", o->power_cap_w, "GPU power limit in W (nvidia-smi -pl); default: the TDP")
      ->check(CLI::PositiveNumber);
  command->callback([=] {
    const ResolvedRequest r = resolve_request(*flags);
    const CarbonInputs carbon = resolve_carbon(*carbon_flags, r.gpu, r.request.gpus);
    const LoadedPredictor p = load_predictor_from_flags(*predictor_flags);
    SimConfig config = config_for_request(r.model, r.gpu, r.request);
    config.scenario.power_cap_w = o->power_cap_w;
    const Prediction prediction = p.predictor->predict(config);
    print(r, p, carbon, prediction, footprint(prediction, carbon, p.bands ? &*p.bands : nullptr), o->format);
  });
}

}  // namespace llmco2::cli
