// measured/sources.h - one importer per public source in ../shared/data/measured (registered in importer.cc).
#pragma once

#include "measured/importer.h"
#include "measured/module.h"

namespace llmco2::measured {

ImportResult import_mlenergy_v1(const std::filesystem::path& folder);
ImportResult import_mlenergy_v2(const std::filesystem::path& folder);
ImportResult import_mlenergy_v3(const std::filesystem::path& folder);
ImportResult import_splitwise(const std::filesystem::path& folder);
ImportResult import_wilkins(const std::filesystem::path& folder);
ImportResult import_tokenpowerbench(const std::filesystem::path& folder);
ImportResult import_chuyishang(const std::filesystem::path& folder);
ImportResult import_benchlab(const std::filesystem::path& folder);
ImportResult import_mlperf_power(const std::filesystem::path& folder);
ImportResult import_mlperf_amd(const std::filesystem::path& folder);

}  // namespace llmco2::measured
