// core/names.h - name normalisation and "did you mean" suggestions for catalog look-ups.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llmco2 {

// Lower-cases and maps '_' and ' ' to '-', so "NVIDIA_H100 SXM" and "nvidia-h100-sxm" compare equal.
std::string normalize_name(std::string_view name);

// Up to `count` names from `candidates` closest to `name` (edit distance, substring matches first).
std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       size_t count = 3);

// "a, b or c"
std::string join_or(const std::vector<std::string>& names);

}  // namespace llmco2
