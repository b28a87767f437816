// research/site.h - the evidence for site profiles in the calibration report: each public source's GPU and engine
// setup treated as a site (fitted on a benchmark-sized subset, scored on the rest) and a synthetic recovery.
#pragma once

#include <map>
#include <string>

#include "calibration/calibration.h"
#include "research/module.h"

namespace llmco2::research {

// Sites: the samples of one source, GPU type and engine, where they number kMinSiteRows or more. Each is fitted from
// its source's held-out parameters (`without_source`, by source) on the kSiteRecipeRows rows choose_site_rows picks,
// and scored on the rest. The synthetic recovery perturbs `global` by known corrections on the largest site's rows.
inline constexpr size_t kMinSiteRows = 50, kSiteRecipeRows = 8;
std::string site_study_markdown(const CalibrationSet& set, const std::map<std::string, SimParams>& without_source,
                                const SimParams& global);

}  // namespace llmco2::research
