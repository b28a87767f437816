// fuzz/fuzz_carbon_tables.cc - the carbon tables: the first byte picks regions.csv (grid intensity), pue.csv or a
// carbon-intensity profile over time (--ci-profile); the rest is the file. The other catalog file is the bundled one.
#include "carbon/ci_profile.h"
#include "carbon/region_catalog.h"
#include "core/paths.h"
#include "harness.h"
#include "support/all_modules.h"

namespace {

void read_intensity_profile(std::string_view text) {
  const auto profile = llmco2::CiProfile::read(llmco2::fuzz::scratch_file("profile.csv", text));
  (void)profile.operational_g(1e6, profile.first_s() - 10, profile.first_s() + 7200, 1.2);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto text = llmco2::fuzz::as_text(data + 1, size - 1);
  const auto bundled = llmco2::data_dir() / "carbon";
  return llmco2::fuzz::expect_error_or_success([&] {
    switch (data[0] % 3) {
      case 0:
        (void)llmco2::RegionCatalog::load(llmco2::fuzz::scratch_file("regions.csv", text), bundled / "pue.csv");
        break;
      case 1:
        (void)llmco2::RegionCatalog::load(bundled / "regions.csv", llmco2::fuzz::scratch_file("pue.csv", text));
        break;
      default:
        read_intensity_profile(text);
        break;
    }
  });
}
