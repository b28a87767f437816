// cli/cmd_predict.cc - `llmco2 predict`: prefill, decode and total energy, latency and carbon (operational and
// embodied) of a request, with 80% intervals, from the bundled LLMCO2 model (Eigen, no libtorch) or another predictor.
#include <iostream>

#include <fmt/format.h>

#include "cli/carbon_flags.h"
#include "cli/commands.h"
#include "cli/predictor_flags.h"
#include "cli/request_flags.h"

namespace llmco2::cli {
namespace {

struct PredictOptions {
  std::string format = "table";
};

void print(const ResolvedRequest& r, const LoadedPredictor& p, const CarbonInputs& carbon, const Footprint& f,
           const std::string& format) {
  if (format == "json") {
    Json j = request_json(r);
    j["predictor"] = p.predictor->name();
    j.update(footprint_json(f, p.band_level));
    j.update(carbon_inputs_json(carbon));
    j["interval_note"] = p.bands_note;
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << request_line(r) << "; predictor " << p.predictor->name() << "\n"
            << footprint_table(f) << carbon_inputs_lines(carbon) << "  " << p.bands_note << "\n";
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
  command->callback([=] {
    const ResolvedRequest r = resolve_request(*flags);
    const CarbonInputs carbon = resolve_carbon(*carbon_flags, r.gpu, r.request.gpus);
    const LoadedPredictor p = load_predictor_from_flags(*predictor_flags);
    const Prediction prediction = p.predictor->predict(config_for_request(r.model, r.gpu, r.request));
    print(r, p, carbon, footprint(prediction, carbon, p.bands ? &*p.bands : nullptr), o->format);
  });
}

}  // namespace llmco2::cli
