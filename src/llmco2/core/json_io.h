// core/json_io.h - reading JSON files with errors that name the file and key, and atomic file writes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace llmco2 {

using Json = nlohmann::json;

// The deepest nesting of arrays and objects accepted: llmco2's files nest at most 6 deep; deeper input would make
// the recursive parts of nlohmann-json (dump, comparisons) overflow the stack.
inline constexpr int kMaxJsonDepth = 64;
// Values in one JSON text: the largest bundled file holds 624; a 64 MiB text of tiny values ("0,0,0,...") held 32
// million, which took 1.8 GB and 21 s to parse. At this bound parsing stays under ~150 MB.
inline constexpr size_t kMaxJsonValues = size_t{1} << 20;

// JSON's insignificant whitespace (RFC 8259: space, tab, line feed, carriage return).
inline bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Parses JSON text. Throws Error "<source>: <what>" when it is malformed (with the parser's byte offset), nests
// deeper than kMaxJsonDepth or holds a number beyond a double's range (1e999).
Json parse_json_text(std::string_view text, const std::string& source);

// The document `text` holds, equal to nlohmann's parse of it (same values, same integer and float types, a repeated
// key's last value), or nullopt for what this faster parser leaves to nlohmann: malformed text, \u escapes, integers
// beyond 64 bits, numbers beyond a double's range and nesting deeper than kMaxJsonDepth. parse_json_text tries it
// first (core/json_parse.cc).
std::optional<Json> parse_json_fast(std::string_view text);

// The members of the JSON object `text` holds: each key and the raw text of its value, in order, found by a scan of
// the structure (strings, escapes, matched brackets) that parses no value, for a reader that needs one member of a
// large document. nullopt when `text` is not such an object or a key holds an escape: the caller then parses the whole
// text, whose parser says what is wrong. A value's own grammar is checked when it is parsed.
using JsonMembers = std::vector<std::pair<std::string_view, std::string_view>>;
std::optional<JsonMembers> json_object_members(std::string_view text);

// Parses a JSON file (a regular file of at most kMaxJsonFileBytes). Throws Error "<path>: <what>" when it is missing,
// not a regular file, too large or malformed (parse_json_text).
Json read_json_file(const std::filesystem::path& path);

// Throws Error "<source>: unexpected JSON value: <nlohmann's message without its code>".
[[noreturn]] void fail_json_exception(const std::string& source, const Json::exception& e);

// Runs `read`, a loader walking parsed JSON; an nlohmann exception it lets escape (a value of an unexpected type deep
// in a file) becomes an Error naming `source` instead of an internal error.
template <typename Read>
auto with_json_errors(const std::string& source, Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const Json::exception& e) {
    fail_json_exception(source, e);
  }
}

// Typed access to an object's keys; errors say "<source>: key '<key>' ...".
class JsonReader {
 public:
  JsonReader(const Json& object, std::string source);

  bool has(std::string_view key) const;  // present and not null
  double number(std::string_view key) const;
  double positive_number(std::string_view key) const;
  std::optional<double> optional_number(std::string_view key) const;
  std::string string(std::string_view key) const;
  std::optional<std::string> optional_string(std::string_view key) const;
  std::optional<bool> optional_bool(std::string_view key) const;
  std::vector<std::string> strings(std::string_view key) const;  // a list of strings; empty when absent
  const Json& at(std::string_view key) const;
  const std::string& source() const { return source_; }

 private:
  const Json& object_;
  std::string source_;
};

// The *.json files of a folder, sorted by name. Throws Error "<dir>: <what> folder not found".
std::vector<std::filesystem::path> json_files_in(const std::filesystem::path& dir, std::string_view what);

// Writes `content` to `path` atomically: a temporary file in the same folder, flushed, then renamed over `path`.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

}  // namespace llmco2
