// cli/cmd_predict.cc - `llmco2 predict`: prefill, decode and total energy, latency and carbon (operational and
// embodied) of a request, with 80% intervals, from the bundled LLMCO2 model (Eigen, no libtorch) or another predictor.
// The answer is the API's (llmco2/api.h), as the HTTP server and the Python bindings give it.
#include <iostream>

#include "cli/carbon_flags.h"
#include "cli/commands.h"
#include "cli/predictor_flags.h"
#include "cli/request_flags.h"

namespace llmco2::cli {

void add_predict_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "predict", "predict a request's prefill, decode and total energy, latency and CO2 (operational and embodied)");
  auto request = std::make_shared<api::Request>();
  auto settings = std::make_shared<api::Settings>();
  auto format = std::make_shared<std::string>("table");
  add_request_flags(*command, *request);
  add_predictor_flags(*command, *request, *settings);
  add_carbon_flags(*command, *request);
  command->add_option("--format", *format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  command->callback([=] {
    const api::Result result = api::Session(*settings).predict(*request);
    print_warnings(result.warnings);
    std::cout << (*format == "json" ? result.json.dump(2) + "\n" : result.text);
  });
}

}  // namespace llmco2::cli
