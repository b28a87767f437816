// core/json_io.h - reading JSON files with errors that name the file and key, and atomic file writes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace llmco2 {

using Json = nlohmann::json;

// Parses a JSON file. Throws Error "<path>: <what>" when it is missing or malformed (with the parser's byte offset).
Json read_json_file(const std::filesystem::path& path);

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
