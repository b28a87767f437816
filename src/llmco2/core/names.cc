// core/names.cc - edit distance based suggestions.
#include "core/names.h"

#include <algorithm>
#include <cctype>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"

namespace llmco2 {
namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

}  // namespace

std::string normalize_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    if (c == '_' || c == ' ') out.push_back('-');
    else out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       size_t count) {
  if (name.size() > kMaxSuggestedNameLength) return {};
  const std::string key = normalize_name(name);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& candidate : candidates) {
    const std::string norm = normalize_name(candidate);
    const bool contains = !key.empty() && (norm.find(key) != std::string::npos || key.find(norm) != std::string::npos);
    scored.emplace_back(contains ? 0 : 1 + edit_distance(key, norm), candidate);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < count; ++i) out.push_back(scored[i].second);
  return out;
}

std::string join_or(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += (i + 1 == names.size()) ? " or " : ", ";
    out += names[i];
  }
  return out;
}

std::string printable(std::string_view text) {
  std::string out;
  for (const unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

void check_catalog_id(std::string_view id, const std::string& source) {
  const auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  const auto allowed = [&](char c) { return lower_or_digit(c) || c == '.' || c == '+' || c == '-'; };
  const bool ok = !id.empty() && id.size() <= 64 && lower_or_digit(id[0]) && std::all_of(id.begin(), id.end(), allowed);
  if (!ok)
    fail(
        "{}: key 'id' must be 1 to 64 characters, a lower-case letter or digit then lower-case letters, digits, '.', "
        "'+' or '-', found '{}'",
        source, printable(id));
}

}  // namespace llmco2
