// measured/benchlab.cc - the benchlab "thank you" run: one aggregate over 1,000 batch-1 HF requests on an H100.
#include <fmt/format.h>

#include "core/json_io.h"
#include "measured/import_common.h"
#include "measured/sources.h"

namespace llmco2::measured {

// The run stores energies but not how many tokens were generated: its tokens/kWh figure assumes every response
// reached max_new_tokens = 1000, which 1.57 s per response on an H100 rules out. Without the token count the row
// cannot say what configuration it measured, so it is rejected with that reason (and the values in the note).
ImportResult import_benchlab(const std::filesystem::path& folder) {
  const auto file = folder / "benchmark_report.json";
  const Json report = read_json_file(file);
  const double prefill_kwh = report.at("prefill").at("energy").at("gpu").get<double>();
  const double decode_kwh = report.at("decode").at("energy").at("gpu").get<double>();
  ImportResult out;
  out.rejects.push_back(
      {file.string(), 1,
       fmt::format("generated-token count not recorded (GPU prefill {:.4f} kWh, decode {:.4f} kWh over 1,000 "
                   "requests; the tool's tokens/kWh assumes 1,000 tokens per response, which the 1.57 s mean "
                   "response time rules out)",
                   prefill_kwh, decode_kwh)});
  return out;
}

}  // namespace llmco2::measured
