// core/json_io.cc - JSON file reading with located errors, and write-then-rename file output.
#include "core/json_io.h"

#include <algorithm>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/input_file.h"

namespace llmco2 {

namespace {

// The index after the string that opens at text[at] == '"', or npos when it is not closed: the first quote after an
// even run of backslashes (found with memchr: most of a catalog's bytes are citations inside strings).
size_t json_string_end(std::string_view text, size_t at) {
  const size_t first = at + 1;
  for (size_t from = first; from < text.size();) {
    const void* found = std::memchr(text.data() + from, '"', text.size() - from);
    if (found == nullptr) break;
    const size_t quote = static_cast<size_t>(static_cast<const char*>(found) - text.data());
    size_t backslashes = 0;
    while (quote - backslashes > first && text[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return quote + 1;
    from = quote + 1;
  }
  return std::string_view::npos;
}

// What parse_json_text checks before parsing: the byte where `text` first nests deeper than `max_depth` (npos if
// nowhere), and an upper bound on its values (1 + commas + opening brackets; strings are skipped).
struct JsonShape {
  size_t too_deep_at = std::string_view::npos;
  size_t values = 1;
};
JsonShape json_shape(std::string_view text, int max_depth) {
  JsonShape shape;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      i = json_string_end(text, i);
      if (i == std::string_view::npos) return shape;  // unterminated: the parser names the byte
      --i;
    } else if (c == '[' || c == '{') {
      ++shape.values;
      if (++depth > max_depth) {
        shape.too_deep_at = i;
        return shape;
      }
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',') {
      ++shape.values;
    }
  }
  return shape;
}

size_t skip_json_space(std::string_view text, size_t at) {
  while (at < text.size() && is_json_space(text[at])) ++at;
  return at;
}

// The index after the value that starts at `at`: a string, an object or array whose brackets match (kMaxJsonDepth at
// most), or a literal or number (up to the next delimiter); npos when it does not end.
size_t json_value_end(std::string_view text, size_t at) {
  if (at >= text.size()) return std::string_view::npos;
  if (text[at] == '"') return json_string_end(text, at);
  if (text[at] != '{' && text[at] != '[') {
    while (at < text.size() && !is_json_space(text[at]) && text[at] != ',' && text[at] != '}' && text[at] != ']') ++at;
    return at;
  }
  std::string closers;
  for (; at < text.size(); ++at) {
    const char c = text[at];
    if (c == '"') {
      at = json_string_end(text, at);
      if (at == std::string_view::npos) return at;
      --at;
    } else if (c == '{' || c == '[') {
      if (closers.size() >= static_cast<size_t>(kMaxJsonDepth)) return std::string_view::npos;
      closers.push_back(c == '{' ? '}' : ']');
    } else if (c == '}' || c == ']') {
      if (closers.empty() || closers.back() != c) return std::string_view::npos;
      closers.pop_back();
      if (closers.empty()) return at + 1;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<JsonMembers> json_object_members(std::string_view text) {
  size_t at = skip_json_space(text, 0);
  if (at >= text.size() || text[at] != '{') return std::nullopt;
  JsonMembers members;
  at = skip_json_space(text, at + 1);
  if (at < text.size() && text[at] == '}') {
    if (skip_json_space(text, at + 1) != text.size()) return std::nullopt;
    return members;
  }
  for (;;) {
    if (at >= text.size() || text[at] != '"') return std::nullopt;
    const size_t key_end = json_string_end(text, at);
    if (key_end == std::string_view::npos) return std::nullopt;
    const std::string_view key = text.substr(at + 1, key_end - at - 2);
    if (key.find('\\') != std::string_view::npos) return std::nullopt;
    at = skip_json_space(text, key_end);
    if (at >= text.size() || text[at] != ':') return std::nullopt;
    const size_t value_start = skip_json_space(text, at + 1);
    const size_t value_end = json_value_end(text, value_start);
    if (value_end == std::string_view::npos || value_end == value_start) return std::nullopt;
    members.emplace_back(key, text.substr(value_start, value_end - value_start));
    at = skip_json_space(text, value_end);
    if (at < text.size() && text[at] == ',') {
      at = skip_json_space(text, at + 1);
      continue;
    }
    if (at < text.size() && text[at] == '}' && skip_json_space(text, at + 1) == text.size()) return members;
    return std::nullopt;
  }
}

Json parse_json_text(std::string_view text, const std::string& source) {
  // Below this many bytes a text cannot hold kMaxJsonValues values (each takes at least two: digit and comma).
  const bool may_hold_too_many = text.size() >= 2 * kMaxJsonValues;
  if (!may_hold_too_many)
    if (std::optional<Json> parsed = parse_json_fast(text)) return std::move(*parsed);
  const JsonShape shape = json_shape(text, kMaxJsonDepth);
  if (shape.too_deep_at != std::string_view::npos)
    fail("{}: JSON nested deeper than {} levels at byte {}", source, kMaxJsonDepth, shape.too_deep_at);
  if (shape.values > kMaxJsonValues)
    fail("{}: JSON of more than {} values (a config.json or catalog file holds a few hundred)", source, kMaxJsonValues);
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // nlohmann's reason without its "[json.exception.parse_error.101] parse error at line 1, column 9: " prefix
    const std::string what = e.what();
    const size_t colon = what.find(": ");
    fail("{}: malformed JSON at byte {}: {}", source, e.byte,
         colon == std::string::npos ? what : what.substr(colon + 2));
  } catch (const Json::exception&) {  // out_of_range: a number beyond a double's range, e.g. 1e999
    fail("{}: malformed JSON: a number too large for a double (expected finite numbers)", source);
  }
}

void fail_json_exception(const std::string& source, const Json::exception& e) {
  std::string_view what = e.what();
  if (const size_t end = what.find("] "); what.starts_with("[json.exception") && end != std::string_view::npos)
    what.remove_prefix(end + 2);
  fail("{}: unexpected JSON value: {}", source, what);
}

Json read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_input_file(path, kMaxJsonFileBytes, "JSON file"), path.string());
}

JsonReader::JsonReader(const Json& object, std::string source) : object_(object), source_(std::move(source)) {
  if (!object_.is_object()) fail("{}: expected a JSON object", source_);
}

bool JsonReader::has(std::string_view key) const {
  const auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

const Json& JsonReader::at(std::string_view key) const {
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) fail("{}: missing key '{}'", source_, key);
  return *it;
}

double JsonReader::number(std::string_view key) const {
  const Json& value = at(key);
  if (!value.is_number()) fail("{}: key '{}' must be a number, found {}", source_, key, value.dump());
  return value.get<double>();
}

double JsonReader::positive_number(std::string_view key) const {
  const double value = number(key);
  if (!(value > 0)) fail("{}: key '{}' must be positive, found {}", source_, key, value);
  return value;
}

std::optional<double> JsonReader::optional_number(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return number(key);
}

std::string JsonReader::string(std::string_view key) const {
  const Json& value = at(key);
  if (!value.is_string()) fail("{}: key '{}' must be a string, found {}", source_, key, value.dump());
  return value.get<std::string>();
}

std::optional<std::string> JsonReader::optional_string(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return string(key);
}

std::optional<bool> JsonReader::optional_bool(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  const Json& value = at(key);
  if (!value.is_boolean()) fail("{}: key '{}' must be true or false, found {}", source_, key, value.dump());
  return value.get<bool>();
}

std::vector<std::string> JsonReader::strings(std::string_view key) const {
  std::vector<std::string> out;
  if (!has(key)) return out;
  for (const Json& item : at(key)) {
    if (!item.is_string()) fail("{}: key '{}' must list strings", source_, key);
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<std::filesystem::path> json_files_in(const std::filesystem::path& dir, std::string_view what) {
  if (!std::filesystem::is_directory(dir)) fail("{}: {} folder not found", dir.string(), what);
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  AtomicFile file(path);
  file.stream().write(content.data(), static_cast<std::streamsize>(content.size()));
  file.commit();
}

}  // namespace llmco2
