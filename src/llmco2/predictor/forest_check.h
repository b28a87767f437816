// predictor/forest_check.h - checking an XGBoost forest from a model file before XGBoost reads it: the blob is
// parsed by us (depth- and size-bounded), every tree's arrays, child links and feature indices are checked, and
// XGBoost is handed a model rebuilt from the checked fields only, never the file's bytes.
#pragma once

#include <string>

#include "predictor/module.h"

namespace llmco2::predictor {

// The largest forest accepted: trees per forest and nodes per tree (the bundled DeepEn forests hold 30 trees of at
// most ~2,000 nodes).
inline constexpr long kMaxForestTrees = 10000;
inline constexpr long kMaxTreeNodes = 1 << 20;

// The forest of `blob` (XGBoost's UBJSON or JSON model) as JSON text for XGBoosterLoadModelFromBuffer. Throws Error
// "<source>: forest '<name>': <what>" when it is not a regression forest of trees over `features` features whose
// nodes form trees (each child after its parent, split features below `features`, finite thresholds and weights).
std::string checked_forest(const std::string& blob, int features, const std::string& source, const std::string& name);

}  // namespace llmco2::predictor
