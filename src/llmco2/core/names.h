// core/names.h - name normalisation and "did you mean" suggestions for catalog look-ups.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llmco2 {

// Lower-cases and maps '_' and ' ' to '-', so "NVIDIA_H100 SXM" and "nvidia-h100-sxm" compare equal.
std::string normalize_name(std::string_view name);

// Up to `count` names from `candidates` closest to `name` (edit distance, substring matches first); none for a name
// longer than kMaxSuggestedNameLength, which no catalog name is near (and whose edit distances would cost its
// length times each candidate's: a 1 MB junk region in an HTTP body took 2.8 s of a worker).
inline constexpr size_t kMaxSuggestedNameLength = 128;
std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       size_t count = 3);

// "a, b or c"
std::string join_or(const std::vector<std::string>& names);

// `text` safe to print on a terminal or in a one-line message: bytes outside printable ASCII as \xNN.
std::string printable(std::string_view text);

// Throws Error "<source>: key 'id' must be 1 to 64 characters, ... found '<printable id>'" unless `id` starts with a
// lower-case letter or digit and holds only lower-case letters, digits, '.', '+' and '-' (so it is its own
// normalize_name, as look-ups compare): ids are printed in tables and messages and written into file names and JSON,
// so a '/', a newline or a terminal escape in one could mislead or break them.
void check_catalog_id(std::string_view id, const std::string& source);

}  // namespace llmco2
