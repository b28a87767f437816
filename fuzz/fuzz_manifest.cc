// fuzz/fuzz_manifest.cc - a run's manifest as `llmco2 check-outputs` reads it (core/output_manifest.h), from a scratch
// folder that also holds one output, out.csv ("a,b\n"): stale_outputs must answer every manifest with a list or an
// Error, whatever names, sizes and checksums it holds, and never read more of a file than the manifest says it has.
#include "harness.h"
#include "support/all_modules.h"

#include "core/output_manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace llmco2;
  static const bool made = [] {
    fuzz::scratch_file("out.csv", "a,b\n");
    return true;
  }();
  (void)made;
  const auto manifest = fuzz::scratch_file("manifest.json", fuzz::as_text(data, size));
  return fuzz::expect_error_or_success([&] { (void)stale_outputs(manifest); });
}
