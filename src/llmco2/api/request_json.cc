// api/request_json.cc - a Request from its JSON form (the HTTP API's and the Python bindings' one reader).
#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/module.h"
#include "core/error.h"
#include "core/json_io.h"
#include "core/names.h"
#include "llmco2/api.h"

namespace llmco2::api {
namespace {

std::string shown(const Json& value) {
  std::string text = value.dump();
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

struct Reader {
  const std::string& where;
  const std::string& key;
  const Json& value;

  [[noreturn]] void wrong(const char* expected) const {
    fail("{}: key '{}': expected {}, got {}", where, key, expected, shown(value));
  }
  std::string text() const {
    if (!value.is_string()) wrong("a string");
    return value.get<std::string>();
  }
  long integer(long low, long high) const {
    if (!value.is_number_integer()) wrong("an integer");
    // nlohmann reads every non-negative integer as unsigned: compare in that type, then in the signed one.
    const bool fits = value.is_number_unsigned()
                          ? value.get<unsigned long long>() <= static_cast<unsigned long long>(high) &&
                                (low <= 0 || value.get<unsigned long long>() >= static_cast<unsigned long long>(low))
                          : value.get<long long>() >= low && value.get<long long>() <= high;
    if (!fits) fail("{}: key '{}': expected an integer between {} and {}, got {}", where, key, low, high, shown(value));
    return static_cast<long>(value.get<long long>());
  }
  double number() const {
    if (!value.is_number()) wrong("a number");
    const double x = value.get<double>();
    if (!std::isfinite(x)) wrong("a finite number");
    return x;
  }
  bool boolean() const {
    if (!value.is_boolean()) wrong("true or false");
    return value.get<bool>();
  }
};

using Setter = std::function<void(Request&, const Reader&)>;

// One entry per key, in the order of request_keys(). Token counts and batches are bounded here only to what the
// types hold; validate_request bounds them to what a model can run.
const std::vector<std::pair<std::string, Setter>>& setters() {
  static const std::vector<std::pair<std::string, Setter>> table = {
      {"model", [](Request& r, const Reader& v) { r.model = v.text(); }},
      {"model_config",
       [](Request& r, const Reader& v) {
         if (!v.value.is_object()) v.wrong("a config.json object");
         r.model_config = v.value;
       }},
      {"gpu", [](Request& r, const Reader& v) { r.gpu = v.text(); }},
      {"gpus", [](Request& r, const Reader& v) { r.gpus = static_cast<int>(v.integer(1, INT_MAX)); }},
      {"pp", [](Request& r, const Reader& v) { r.pipeline_parallel = static_cast<int>(v.integer(1, INT_MAX)); }},
      {"batch", [](Request& r, const Reader& v) { r.batch = v.integer(1, LONG_MAX); }},
      {"prompt", [](Request& r, const Reader& v) { r.prompt_tokens = v.integer(1, LONG_MAX); }},
      {"gen", [](Request& r, const Reader& v) { r.gen_tokens = v.integer(1, LONG_MAX); }},
      {"dtype", [](Request& r, const Reader& v) { r.dtype = v.text(); }},
      {"flash", [](Request& r, const Reader& v) { r.flash_attention = v.boolean(); }},
      {"engine", [](Request& r, const Reader& v) { r.engine = v.text(); }},
      {"expert_parallel", [](Request& r, const Reader& v) { r.expert_parallel = v.boolean(); }},
      {"power_cap", [](Request& r, const Reader& v) { r.power_cap_w = v.number(); }},
      {"clock_mhz", [](Request& r, const Reader& v) { r.clock_mhz = v.number(); }},
      {"spec", [](Request& r, const Reader& v) { r.spec = v.text(); }},
      {"spec_tokens", [](Request& r, const Reader& v) { r.spec_tokens = static_cast<int>(v.integer(0, 1000)); }},
      {"spec_acceptance", [](Request& r, const Reader& v) { r.spec_acceptance = v.number(); }},
      {"scope", [](Request& r, const Reader& v) { r.scope = v.text(); }},
      {"node", [](Request& r, const Reader& v) { r.node = v.text(); }},
      {"region", [](Request& r, const Reader& v) { r.region = v.text(); }},
      {"ci", [](Request& r, const Reader& v) { r.ci_g_per_kwh = v.number(); }},
      {"pue",
       [](Request& r, const Reader& v) { r.pue = v.value.is_number() ? fmt::format("{}", v.number()) : v.text(); }},
      {"lifetime", [](Request& r, const Reader& v) { r.lifetime_years = v.number(); }},
      {"embodied_basis", [](Request& r, const Reader& v) { r.embodied_basis = v.text(); }},
      {"embodied_kg", [](Request& r, const Reader& v) { r.embodied_kg = v.number(); }},
      {"predictor", [](Request& r, const Reader& v) { r.predictor = v.text(); }},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& request_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto& [key, setter] : setters()) out.push_back(key);
    return out;
  }();
  return keys;
}

Json parse_json(std::string_view text, const std::string& source) { return parse_json_text(text, source); }

void fail_unknown_key(const std::string& where, const std::string& key, const std::vector<std::string>& keys) {
  fail("{}: unknown key '{}' (did you mean {}? the keys are {})", where, key, join_or(nearest_names(key, keys, 2)),
       fmt::format("{}", fmt::join(keys, ", ")));
}

Request request_from_json(const Json& json, const std::string& where, const Request& defaults,
                          const std::vector<std::string>& call_keys) {
  if (!json.is_object()) fail("{}: expected a JSON object of request fields, got {}", where, shown(json));
  Request r = defaults;
  for (const auto& item : json.items()) {
    const std::string& key = item.key();
    const Json& value = item.value();
    const auto& table = setters();
    const auto it = std::find_if(table.begin(), table.end(), [&](const auto& e) { return e.first == key; });
    if (it == table.end()) {
      std::vector<std::string> all = request_keys();
      all.insert(all.end(), call_keys.begin(), call_keys.end());
      fail("{}: unknown key '{}' (did you mean {}? the keys are the CLI's flags: {}{})", where, key,
           join_or(nearest_names(key, all, 2)), fmt::format("{}", fmt::join(request_keys(), ", ")),
           call_keys.empty() ? "" : fmt::format("; and this call's: {}", fmt::join(call_keys, ", ")));
    }
    if (value.is_null()) continue;  // null: the default
    it->second(r, Reader{where, key, value});
  }
  return r;
}

namespace {

// Lists a compare call may hold: every bundled GPU type fits, and the time per call stays bounded.
constexpr size_t kMaxGpuTypes = 64, kMaxCounts = 16;

std::vector<std::string> string_list(const Json& value, const std::string& where) {
  if (!value.is_array() || value.size() > kMaxGpuTypes)
    fail("{}: expected an array of at most {} strings", where, kMaxGpuTypes);
  std::vector<std::string> out;
  for (const Json& v : value) {
    if (!v.is_string()) fail("{}: expected an array of strings, got {}", where, v.dump());
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::vector<int> count_list(const Json& value, const std::string& where) {
  if (!value.is_array() || value.size() > kMaxCounts)
    fail("{}: expected an array of at most {} GPU counts", where, kMaxCounts);
  std::vector<int> out;
  for (const Json& v : value) {
    // Signed or unsigned (JSON text reads 2 as unsigned, Python's 2 arrives signed); beyond long long wraps negative.
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 1024)
      fail("{}: expected GPU counts between 1 and 1024, got {}", where, v.dump());
    out.push_back(v.get<int>());
  }
  return out;
}

double positive_number(const Json& value, const std::string& where) {
  if (!value.is_number() || !(value.get<double>() > 0))
    fail("{}: expected a positive number of milliseconds, got {}", where, value.dump());
  return value.get<double>();
}

}  // namespace

CompareOptions compare_options_from_json(const Json& json, const std::string& where) {
  CompareOptions options;  // no plots, no trace: nothing is read or written by path
  if (json.contains("gpu_types")) options.gpu_types = string_list(json["gpu_types"], where + ": key 'gpu_types'");
  if (json.contains("counts")) options.counts = count_list(json["counts"], where + ": key 'counts'");
  if (json.contains("slo_ms") && !json["slo_ms"].is_null())
    options.slo_ms = positive_number(json["slo_ms"], where + ": key 'slo_ms'");
  return options;
}

}  // namespace llmco2::api
