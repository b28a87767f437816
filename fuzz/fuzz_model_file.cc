// fuzz/fuzz_model_file.cc - a predictor model file (GNN, NNLQP, DeepEn's XGBoost forests, LLMCarbon) through the
// container reader, the predictor loader and one prediction. The harness re-seals the checksum of the mutated bytes
// (when the input is long enough to hold one), so mutations reach the structure checks behind it, as a crafted file
// would.
#include <cstring>
#include <string>

#include "harness.h"
#include "predictor/model_file.h"
#include "predictor/predictor.h"
#include "sim/label.h"
#include "sim/sim_params.h"
#include "support/all_modules.h"

namespace {

std::string resealed(std::string bytes) {
  if (bytes.size() < 28) return bytes;  // magic, version, header length and checksum: 28 bytes
  const size_t body = bytes.size() - sizeof(uint64_t);
  const uint64_t checksum = llmco2::model_file_checksum(std::string_view(bytes).substr(0, body));
  std::memcpy(bytes.data() + body, &checksum, sizeof checksum);
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const llmco2::SimParams params = llmco2::load_sim_params_or_default("");
  static const llmco2::PredictorInput config = [] {
    llmco2::CatalogCache catalogs;
    llmco2::PredictorInput c = llmco2::predictor_input(llmco2::default_config("llama-3.1-8b", "h100-sxm", catalogs));
    c.request.prompt_tokens = 64;
    c.request.gen_tokens = 4;
    return c;
  }();
  return llmco2::fuzz::expect_error_or_success([&] {
    const auto bytes = resealed(std::string(llmco2::fuzz::as_text(data, size)));
    const auto predictor = llmco2::load_predictor(llmco2::fuzz::scratch_file("predictor.model", bytes), params);
    (void)predictor->predict(config);
  });
}
