// python/module.cc - the Python extension `llmco2._core` (pybind11): the public API (llmco2/api.h) with keyword
// requests, answers as dicts equal to the CLI's JSON, and llmco2::Error raised as llmco2.Error (a ValueError); its
// submodule `_core.research` binds the research calls (llmco2/research.h) as the CLI's commands of those names do.
// The GIL is released while the C++ core works; the long calls run on a thread of their own, so that Ctrl-C stops
// them.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "llmco2/api.h"
#include "llmco2/research.h"

namespace py = pybind11;
using llmco2::api::Json;

namespace {

// A str as UTF-8. A lone surrogate ('\ud800') has no UTF-8 form: llmco2.Error naming `where`, not a RuntimeError.
std::string utf8(const py::handle& text, const std::string& where) {
  Py_ssize_t size = 0;
  const char* bytes = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (bytes == nullptr) {
    PyErr_Clear();
    throw llmco2::Error(where + ": a string that is not valid Unicode (a lone surrogate has no UTF-8 form)");
  }
  return std::string(bytes, static_cast<size_t>(size));
}

// A Python value (None, bool, int, float, str, list, tuple, dict; numpy scalars through their Python value) as JSON,
// at most 64 levels deep (the depth every JSON text the API reads is held to).
Json to_json(const py::handle& value, const std::string& key, int depth = 0) {
  if (depth > 64) throw llmco2::Error(key + ": nested deeper than 64 levels");
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) {  // as JSON text would give it: signed, else unsigned, else refused
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow == 0) return v;
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(value.ptr());
      if (!PyErr_Occurred()) return u;
      PyErr_Clear();
    }
    throw llmco2::Error(key + ": an integer beyond 64 bits");
  }
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return utf8(value, key);
  if (py::isinstance<py::dict>(value)) {
    Json j = Json::object();
    for (const auto& [k, v] : value.cast<py::dict>()) j[utf8(py::str(k), key)] = to_json(v, key, depth + 1);
    return j;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    Json j = Json::array();
    for (const auto& v : value) j.push_back(to_json(v, key, depth + 1));
    return j;
  }
  if (py::hasattr(value, "item")) return to_json(value.attr("item")(), key, depth + 1);              // numpy scalars
  if (py::hasattr(value, "__fspath__")) return to_json(value.attr("__fspath__")(), key, depth + 1);  // pathlib.Path
  throw llmco2::Error(key + ": cannot pass a value of type " +
                      py::str(value.get_type().attr("__name__")).cast<std::string>());
}

// JSON as Python objects, through the json module (exact for every type the answers hold; invalid UTF-8 from a
// file's bytes quoted in the answer becomes U+FFFD rather than an exception).
py::object to_python(const Json& j) {
  return py::module_::import("json").attr("loads")(j.dump(-1, ' ', false, Json::error_handler_t::replace));
}

Json kwargs_json(const py::kwargs& kwargs, const char* where) {
  Json j = Json::object();
  for (const auto& [key, value] : kwargs) {
    const std::string name = utf8(py::str(key), std::string(where) + ": a key");
    j[name] = to_json(value, std::string(where) + ": key '" + name + "'");
  }
  return j;
}

// Splits keyword arguments into the request's keys and the call's own options (`own`, removed from the request).
Json take(Json& request, const std::string& key) {
  if (!request.contains(key)) return nullptr;
  Json value = request[key];
  request.erase(key);
  return value;
}

// ---- A call's own keywords into its options struct (serve_sim's, the trace options, the research calls') ----

// `value` as a T, or llmco2.Error "<where>: expected ..., got <value>" (api::request_from_json's wording): a bool is
// no number, a float no integer, an integer must fit T; a single value stands for a list of one.
template <typename T>
T keyword_value(const Json& value, const std::string& where) {
  const auto wrong = [&](const std::string& expected) {
    std::string shown = value.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    return llmco2::Error(where + ": expected " + expected + ", got " + shown);
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) throw wrong("true or false");
    return value.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!value.is_number_integer()) throw wrong("an integer");
    if (value.is_number_unsigned() ? !std::in_range<T>(value.get<std::uint64_t>())
                                   : !std::in_range<T>(value.get<std::int64_t>()))
      throw wrong("an integer from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
                  std::to_string(std::numeric_limits<T>::max()));
    return value.get<T>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!value.is_number() || !std::isfinite(value.get<double>())) throw wrong("a finite number");
    return value.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) throw wrong("a string");
    return value.get<std::string>();
  } else {  // a std::vector of one of the above
    if (!value.is_array()) return T{keyword_value<typename T::value_type>(value, where)};
    T out;
    for (const Json& item : value) out.push_back(keyword_value<typename T::value_type>(item, where));
    return out;
  }
}

// One keyword of a call: its name, how its value goes into the options, and how the options' value reads back (the
// defaults the tests hold the Python signatures to).
template <typename Options>
struct Keyword {
  std::string name;
  std::function<void(Options&, const Json&, const std::string&)> store;
  std::function<Json(const Options&)> load;
};
template <typename Options>
using Keywords = std::vector<Keyword<Options>>;

template <typename Options, typename T>
Keyword<Options> keyword(std::string name, T Options::*member) {
  return {std::move(name),
          [member](Options& o, const Json& v, const std::string& where) { o.*member = keyword_value<T>(v, where); },
          [member](const Options& o) { return Json(o.*member); }};
}

// Moves the keywords of `table` out of `given` into `options` (None keeps the default); the rest stays in `given`.
template <typename Options>
void take_keywords(Json& given, const std::string& call, const Keywords<Options>& table, Options& options) {
  for (const Keyword<Options>& k : table)
    if (Json v = take(given, k.name); !v.is_null()) k.store(options, v, call + ": key '" + k.name + "'");
}

// The keyword names of `table`, with `more` after them.
template <typename Options>
std::vector<std::string> names_of(const Keywords<Options>& table, std::vector<std::string> more = {}) {
  std::vector<std::string> names;
  for (const Keyword<Options>& k : table) names.push_back(k.name);
  names.insert(names.end(), more.begin(), more.end());
  return names;
}

// The options of a call that takes no request: every keyword must be one of `table`'s.
template <typename Options>
Options options_from(Json given, const std::string& call, const Keywords<Options>& table) {
  Options options;
  take_keywords(given, call, table, options);
  if (!given.empty()) llmco2::api::fail_unknown_key(call, given.begin().key(), names_of(table));
  return options;
}

// The defaults of `table`'s keywords (an empty string as None).
template <typename Options>
Json defaults_of(const Keywords<Options>& table) {
  const Options options{};
  Json out = Json::object();
  for (const Keyword<Options>& k : table) {
    const Json value = k.load(options);
    out[k.name] = value.is_string() && value.get<std::string>().empty() ? Json(nullptr) : value;
  }
  return out;
}

// A call's keyword that is no field of its options struct (a path, a format), `fallback` when absent or None.
template <typename T>
T take_value(Json& given, const std::string& call, const std::string& key, T fallback) {
  const Json value = take(given, key);
  return value.is_null() ? fallback : keyword_value<T>(value, call + ": key '" + key + "'");
}

// Refuses request keys that a call does not take (its CLI command has no such flag), saying why.
void refuse_keys(const Json& given, const std::string& call, const std::vector<std::string>& keys, const char* why) {
  for (const std::string& key : keys)
    if (given.contains(key)) throw llmco2::Error(call + ": key '" + key + "' is not taken: " + why);
}

// Runs `call` on a thread of its own with the GIL released while this thread checks every 50 ms for a signal
// (Ctrl-C): on one, the call is asked to stop at its next step (api::request_interrupt), joined, and the signal's
// exception (KeyboardInterrupt) raised. A call the interpreter waited on whole took effect only when it ended.
template <typename Call>
auto interruptible(Call call) -> decltype(call()) {
  std::optional<decltype(call())> value;
  std::exception_ptr error;
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false, interrupted = false;
  {
    py::gil_scoped_release release;
    std::thread worker([&] {
      try {
        value.emplace(call());
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lock(mutex);
      done = true;
      finished.notify_one();
    });
    std::unique_lock lock(mutex);
    while (!finished.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
      lock.unlock();
      {
        py::gil_scoped_acquire gil;
        interrupted = PyErr_CheckSignals() != 0;  // the handler's exception stays set on this thread
      }
      lock.lock();
      if (!interrupted) continue;
      llmco2::api::request_interrupt(true);
      finished.wait(lock, [&] { return done; });
      break;
    }
    lock.unlock();
    worker.join();
    if (interrupted) llmco2::api::request_interrupt(false);
  }
  if (interrupted) throw py::error_already_set();
  if (error) std::rethrow_exception(error);
  return std::move(*value);
}

const llmco2::api::Session& session() {
  static const llmco2::api::Session instance;  // predictors loaded once per process, on first use
  return instance;
}

// The session a call's `site` keyword asks for (a site profile, written by llmco2 calibrate --site): the process's
// session without one, else one session per profile file, made on first use (its file read then, once).
const llmco2::api::Session& session_for(Json& j, const std::string& call) {
  const std::string site = take_value<std::string>(j, call, "site", "");
  if (site.empty()) return session();
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<const llmco2::api::Session>> sessions;
  std::lock_guard lock(mutex);
  std::unique_ptr<const llmco2::api::Session>& s = sessions[site];
  if (!s) {
    llmco2::api::Settings settings;
    settings.site = site;
    s = std::make_unique<const llmco2::api::Session>(settings);
  }
  return *s;
}

// Runs `call` with the GIL released (a short call: no thread of its own).
template <typename Call>
auto released(Call call) -> decltype(call()) {
  py::gil_scoped_release release;
  return call();
}

// An answer as Python: its JSON document (the CLI's --format json) plus "warnings", the lines the CLI prints on
// stderr; with `text` (calls whose CLI prints a table or a report, not JSON) also "text", what the CLI prints.
py::dict answer(const llmco2::api::Result& result, bool text = false) {
  py::dict out = result.json.is_object() ? to_python(result.json).cast<py::dict>() : py::dict();
  if (text) out["text"] = result.text;
  out["warnings"] = result.warnings;
  return out;
}

py::dict predict(const py::kwargs& kwargs) {
  Json j = kwargs_json(kwargs, "predict");
  const llmco2::api::Session& s = session_for(j, "predict");
  const llmco2::api::Request request = llmco2::api::request_from_json(j, "predict");
  return answer(released([&] { return s.predict(request); }));
}

// Columns: each a scalar (the same for every row) or a sequence of one value per row.
std::vector<llmco2::api::Request> requests_from_columns(const py::dict& columns) {
  struct Column {
    std::string name;
    py::object values;  // a list, or the scalar itself
    bool scalar;
  };
  std::vector<Column> table;
  std::optional<size_t> rows;
  for (const auto& [key, value] : columns) {
    Column c{utf8(py::str(key), "predict_many: a column name"), py::reinterpret_borrow<py::object>(value), true};
    c.scalar =
        py::isinstance<py::str>(c.values) || py::isinstance<py::dict>(c.values) || !py::hasattr(c.values, "__len__");
    if (!c.scalar) {
      c.values = py::list(c.values);
      const size_t n = py::len(c.values);
      if (rows && n != *rows)
        throw llmco2::Error("predict_many: column '" + c.name + "' has " + std::to_string(n) + " values, the others " +
                            std::to_string(*rows));
      rows = n;
    }
    table.push_back(std::move(c));
  }
  std::vector<llmco2::api::Request> requests;
  requests.reserve(rows.value_or(1));
  for (size_t i = 0; i < rows.value_or(1); ++i) {
    const std::string where = "predict_many: row " + std::to_string(i);
    Json j = Json::object();
    for (const Column& c : table)
      j[c.name] = to_json(c.scalar ? py::handle(c.values) : c.values[py::int_(i)], where + ": key '" + c.name + "'");
    requests.push_back(llmco2::api::request_from_json(j, where));
  }
  return requests;
}

py::array_t<double> column(const std::vector<llmco2::api::Result>& results,
                           double (*figure)(const llmco2::api::Figures&)) {
  py::array_t<double> out(static_cast<py::ssize_t>(results.size()));
  auto view = out.mutable_unchecked<1>();
  for (size_t i = 0; i < results.size(); ++i) view(static_cast<py::ssize_t>(i)) = figure(results[i].figures);
  return out;
}

py::dict predict_many(const py::dict& columns, int threads) {
  const std::vector<llmco2::api::Request> requests = requests_from_columns(columns);
  const std::vector<llmco2::api::Result> results =
      interruptible([&] { return session().predict_many(requests, threads); });
  py::dict out;
  out["energy_j"] = column(results, [](const llmco2::api::Figures& f) { return f.energy_j; });
  out["energy_prefill_j"] = column(results, [](const llmco2::api::Figures& f) { return f.energy_prefill_j; });
  out["energy_decode_j"] = column(results, [](const llmco2::api::Figures& f) { return f.energy_decode_j; });
  out["latency_s"] = column(results, [](const llmco2::api::Figures& f) { return f.latency_s; });
  out["ttft_s"] = column(results, [](const llmco2::api::Figures& f) { return f.ttft_s; });
  out["tpot_s"] = column(results, [](const llmco2::api::Figures& f) { return f.tpot_s.value_or(std::nan("")); });
  out["co2_operational_g"] = column(results, [](const llmco2::api::Figures& f) { return f.co2_operational_g; });
  out["co2_embodied_g"] =
      column(results, [](const llmco2::api::Figures& f) { return f.co2_embodied_g.value_or(std::nan("")); });
  out["co2_total_g"] = column(results, [](const llmco2::api::Figures& f) { return f.co2_total_g; });
  return out;
}

using llmco2::api::TraceOptions;
const Keywords<TraceOptions>& trace_keywords() {
  static const Keywords<TraceOptions> table = {
      keyword("grid", &TraceOptions::grid_ratio), keyword("bin_s", &TraceOptions::bin_s),
      keyword("keep_time_outliers", &TraceOptions::keep_time_outliers),
      keyword("report_dir", &TraceOptions::report_dir), keyword("by_request_csv", &TraceOptions::by_request_csv)};
  return table;
}

TraceOptions trace_options(Json& j, const std::string& call) {
  TraceOptions options;
  take_keywords(j, call, trace_keywords(), options);
  return options;
}

py::dict score_trace(const std::string& path, const py::kwargs& kwargs) {
  Json j = kwargs_json(kwargs, "score_trace");
  const llmco2::api::Session& s = session_for(j, "score_trace");
  const llmco2::api::TraceOptions options = trace_options(j, "score_trace");
  const llmco2::api::Request setup = llmco2::api::request_from_json(j, "score_trace", {}, names_of(trace_keywords()));
  const llmco2::api::Result result = interruptible([&] { return s.score_trace(path, setup, options); });
  return to_python(result.json).cast<py::dict>();
}

py::dict score_requests(const std::vector<long>& prompt_tokens, const std::vector<long>& gen_tokens,
                        const std::optional<std::vector<double>>& time_s, const std::string& source,
                        const py::kwargs& kwargs) {
  Json j = kwargs_json(kwargs, "score_requests");
  const llmco2::api::Session& s = session_for(j, "score_requests");
  const llmco2::api::TraceOptions options = trace_options(j, "score_requests");
  const llmco2::api::Request setup =
      llmco2::api::request_from_json(j, "score_requests", {}, names_of(trace_keywords()));
  llmco2::api::LogColumns log{prompt_tokens, gen_tokens, time_s.value_or(std::vector<double>{}), source};
  const llmco2::api::Result result = interruptible([&] { return s.score_requests(log, setup, options); });
  return to_python(result.json).cast<py::dict>();
}

py::dict compare(const py::kwargs& kwargs) {
  Json j = kwargs_json(kwargs, "compare");
  const llmco2::api::Session& s = session_for(j, "compare");
  static const std::vector<std::string> keys = {"gpu_types", "counts", "slo_ms"};  // read as the HTTP API reads them
  Json own = Json::object();
  for (const std::string& key : keys)
    if (Json v = take(j, key); !v.is_null()) own[key] = v;
  const llmco2::api::CompareOptions o = llmco2::api::compare_options_from_json(own, "compare");
  const llmco2::api::Request request = llmco2::api::request_from_json(j, "compare", {}, keys);
  const llmco2::api::Result result = interruptible([&] { return s.compare(request, o); });
  return to_python(result.json).cast<py::dict>();
}

using llmco2::api::ServeSimOptions;
const Keywords<ServeSimOptions>& serve_sim_keywords() {  // `llmco2 serve-sim`'s flags, by the struct's names
  static const Keywords<ServeSimOptions> table = {
      keyword("replicas", &ServeSimOptions::replicas),
      keyword("router", &ServeSimOptions::router),
      keyword("max_num_seqs", &ServeSimOptions::max_num_seqs),
      keyword("max_batched_tokens", &ServeSimOptions::max_batched_tokens),
      keyword("block_size", &ServeSimOptions::block_size),
      keyword("gpu_memory_utilization", &ServeSimOptions::gpu_memory_utilization),
      keyword("rate_scale", &ServeSimOptions::rate_scale),
      keyword("duration_s", &ServeSimOptions::duration_s),
      keyword("slo_ttft_ms", &ServeSimOptions::slo_ttft_ms),
      keyword("slo_tpot_ms", &ServeSimOptions::slo_tpot_ms),
      keyword("ci_profile", &ServeSimOptions::ci_profile),
      keyword("attribute_idle", &ServeSimOptions::attribute_idle),
      keyword("keep_time_outliers", &ServeSimOptions::keep_time_outliers),
      keyword("progress", &ServeSimOptions::progress),
      keyword("requests_csv", &ServeSimOptions::requests_csv),
      keyword("plot_dir", &ServeSimOptions::plot_dir),
      keyword("bin_s", &ServeSimOptions::bin_s),
      keyword("num_prompts", &ServeSimOptions::num_prompts),
      keyword("input_len", &ServeSimOptions::input_len),
      keyword("output_len", &ServeSimOptions::output_len),
      keyword("range_ratio", &ServeSimOptions::range_ratio),
      keyword("seed", &ServeSimOptions::seed),
      keyword("concurrency", &ServeSimOptions::concurrency),
      keyword("prefix_caching", &ServeSimOptions::prefix_caching),
      keyword("prefix_share", &ServeSimOptions::prefix_share),
      keyword("request_rate", &ServeSimOptions::request_rate),
      keyword("disaggregate", &ServeSimOptions::disaggregate),
      keyword("decode_gpu", &ServeSimOptions::decode_gpu),
      keyword("decode_gpus", &ServeSimOptions::decode_gpus),
      keyword("kv_link_gbps", &ServeSimOptions::kv_link_gbps)};
  return table;
}

py::dict serve_sim(const std::string& log, const py::kwargs& kwargs) {
  Json j = kwargs_json(kwargs, "serve_sim");
  ServeSimOptions options;
  take_keywords(j, "serve_sim", serve_sim_keywords(), options);
  options.log = log;
  llmco2::api::Settings settings;  // `--params`: the simulator's parameters, a session's setting
  settings.params = take_value<std::string>(j, "serve_sim", "params", "");
  settings.site = take_value<std::string>(j, "serve_sim", "site", "");
  refuse_keys(j, "serve_sim", {"prompt", "gen", "predictor"},
              "each request's tokens come from the log (or input_len and output_len with num_prompts), and the "
              "serving simulation prices every step");
  const llmco2::api::Request request =
      llmco2::api::request_from_json(j, "serve_sim", {}, names_of(serve_sim_keywords(), {"params", "site"}));
  return answer(interruptible([&] {
    return settings.params.empty() && settings.site.empty()
               ? session().serve_sim(request, options)
               : llmco2::api::Session(settings).serve_sim(request, options);
  }));
}

// ---- The research calls (llmco2/research.h), keywords named as their CLI commands' flags ----

namespace research = llmco2::research;

// The request keys the reference simulator does not read (`llmco2 graph` and `simulate` have no such flags): it
// meters the GPU boards, as NVML does, and prices no carbon.
const std::vector<std::string> kNotSimulated = {"scope",    "node",           "region",      "ci",       "pue",
                                                "lifetime", "embodied_basis", "embodied_kg", "predictor"};
constexpr const char* kNotSimulatedWhy =
    "the reference simulator meters the GPU boards and prices no carbon (llmco2.predict(predictor=\"sim\", "
    "scope=\"gpu\") gives the same energy with its CO2)";

py::dict kernel_graph(const py::kwargs& kwargs) {
  Json j = kwargs_json(kwargs, "kernel_graph");
  const auto format = take_value<std::string>(j, "kernel_graph", "format", "json");
  const auto phase = take_value<std::string>(j, "kernel_graph", "phase", "prefill");
  refuse_keys(j, "kernel_graph", kNotSimulated, kNotSimulatedWhy);
  const llmco2::api::Request request = llmco2::api::request_from_json(j, "kernel_graph");
  return answer(released([&] { return research::kernel_graph(request, format, phase); }), format != "json");
}

py::dict simulate(const py::kwargs& kwargs) {
  Json j = kwargs_json(kwargs, "simulate");
  const auto params = take_value<std::string>(j, "simulate", "params", "");
  refuse_keys(j, "simulate", kNotSimulated, kNotSimulatedWhy);
  const llmco2::api::Request request = llmco2::api::request_from_json(j, "simulate");
  return answer(released([&] { return research::simulate(request, params); }));
}

const Keywords<research::SampleOptions>& sample_keywords() {
  using O = research::SampleOptions;
  static const Keywords<O> table = {keyword("out", &O::out),
                                    keyword("count", &O::count),
                                    keyword("seed", &O::seed),
                                    keyword("models", &O::models),
                                    keyword("gpus", &O::gpus),
                                    keyword("max_gpus", &O::max_gpus),
                                    keyword("batch_weights", &O::batch_weights),
                                    keyword("int8_share", &O::int8_share)};
  return table;
}

py::dict sample(const py::kwargs& kwargs) {
  const auto o = options_from(kwargs_json(kwargs, "sample"), "sample", sample_keywords());
  const long written = interruptible([&] { return research::sample(o); });
  py::dict out;
  out["configurations"] = written;
  out["written"] = o.out;
  return out;
}

const Keywords<research::LabelOptions>& label_keywords() {  // `llmco2 simulate --plan`'s flags
  using O = research::LabelOptions;
  static const Keywords<O> table = {keyword("plan", &O::plan),       keyword("out", &O::out),
                                    keyword("repeats", &O::repeats), keyword("seed", &O::seed),
                                    keyword("params", &O::params),   keyword("progress", &O::progress)};
  return table;
}

py::dict label_plan(const py::kwargs& kwargs) {
  const auto o = options_from(kwargs_json(kwargs, "label_plan"), "label_plan", label_keywords());
  const research::LabelSummary s = interruptible([&] { return research::label_plan(o); });
  py::dict out;
  out["rows_written"] = s.rows_written;
  out["rejects"] = s.rejects;
  out["written"] = o.out;
  return out;
}

py::list measurement_sources() {
  py::list out;
  for (const research::SourceInfo& s : research::measurement_sources()) {
    py::dict source;
    source["id"] = s.id, source["folder"] = s.folder, source["summary"] = s.summary;
    source["importable"] = s.importable;
    out.append(source);
  }
  return out;
}

const Keywords<research::ImportOptions>& import_keywords() {  // `from` is Python's: from_
  using O = research::ImportOptions;
  static const Keywords<O> table = {keyword("from_", &O::from), keyword("out_dir", &O::out_dir)};
  return table;
}

py::dict import_source(const std::string& source, const py::kwargs& kwargs) {
  const auto o = options_from(kwargs_json(kwargs, "import_source"), "import_source", import_keywords());
  const research::ImportSummary s = interruptible([&] { return research::import_source(source, o); });
  py::dict out, reasons;
  out["id"] = s.id, out["written"] = s.written, out["rows"] = s.rows, out["rejected"] = s.rejected;
  for (const auto& [reason, count] : s.reject_reasons) reasons[py::str(reason)] = count;  // most frequent first
  out["reject_reasons"] = reasons;
  return out;
}

const Keywords<research::CalibrateOptions>& calibrate_keywords() {
  using O = research::CalibrateOptions;
  static const Keywords<O> table = {keyword("data", &O::data_dir),
                                    keyword("params_out", &O::params_out),
                                    keyword("report", &O::report),
                                    keyword("rows_out", &O::rows_out),
                                    keyword("max_evaluations", &O::max_evaluations),
                                    keyword("fit_only", &O::fit_only),
                                    keyword("threads", &O::threads)};
  return table;
}

py::dict calibrate(const py::kwargs& kwargs) {
  const auto o = options_from(kwargs_json(kwargs, "calibrate"), "calibrate", calibrate_keywords());
  const research::CalibrateSummary s = interruptible([&] { return research::calibrate(o); });
  py::dict out;
  out["params_written"] = s.params_written, out["report_written"] = s.report_written;
  out["rows"] = s.rows, out["simulatable"] = s.simulatable, out["skipped"] = s.skipped;
  out["seconds"] = s.seconds, out["warnings"] = s.warnings;
  return out;
}

const Keywords<research::KernelFitOptions>& fit_kernels_keywords() {  // `llmco2 calibrate --kernels`'s flags
  using O = research::KernelFitOptions;
  static const Keywords<O> table = {keyword("vidur", &O::vidur_dir), keyword("kernel_tables", &O::tables_dir),
                                    keyword("kernels_out", &O::kernels_out), keyword("kernels_report", &O::report),
                                    keyword("data", &O::data_dir)};
  return table;
}

py::dict fit_kernels(const py::kwargs& kwargs) {
  const auto o = options_from(kwargs_json(kwargs, "fit_kernels"), "fit_kernels", fit_kernels_keywords());
  const research::KernelFitSummary s = interruptible([&] { return research::fit_kernels(o); });
  py::dict out;
  out["kernels_written"] = s.kernels_written, out["report_written"] = s.report_written;
  out["compute_samples"] = s.compute_samples, out["network_samples"] = s.network_samples;
  out["table_samples"] = s.table_samples;
  out["seconds"] = s.seconds, out["warnings"] = s.warnings;
  return out;
}

const Keywords<research::CampaignScoreOptions>& score_campaign_keywords() {
  using O = research::CampaignScoreOptions;
  static const Keywords<O> table = {keyword("model", &O::model), keyword("engines", &O::engines),
                                    keyword("params", &O::params), keyword("report", &O::report)};
  return table;
}

py::dict score_campaign(const std::vector<std::string>& dirs, const py::kwargs& kwargs) {
  auto o = options_from(kwargs_json(kwargs, "score_campaign"), "score_campaign", score_campaign_keywords());
  o.dirs = dirs;
  return answer(interruptible([&] { return research::score_campaign(o); }), true);
}

const Keywords<research::ServeValidateOptions>& serve_validate_keywords() {
  using O = research::ServeValidateOptions;
  static const Keywords<O> table = {keyword("data", &O::data_dir),     keyword("source", &O::source),
                                    keyword("params", &O::params),     keyword("held_out", &O::held_out),
                                    keyword("rows_out", &O::rows_out), keyword("markdown_out", &O::markdown_out),
                                    keyword("progress", &O::progress)};
  return table;
}

py::dict serve_validate(const py::kwargs& kwargs) {
  const auto o = options_from(kwargs_json(kwargs, "serve_validate"), "serve_validate", serve_validate_keywords());
  return answer(interruptible([&] { return research::serve_validate(o); }), true);
}

// The defaults of api::Request, api::CompareOptions and every options struct above under the keys the bindings take
// (an empty string or an absent optional as None): the tests hold the Python signatures' defaults to them.
py::dict defaults() {
  const llmco2::api::Request r;
  const auto optional = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  const auto text = [](const std::string& v) { return v.empty() ? Json(nullptr) : Json(v); };
  const Json request = {{"model", r.model},
                        {"model_config", r.model_config ? *r.model_config : Json(nullptr)},
                        {"gpu", r.gpu},
                        {"gpus", r.gpus},
                        {"pp", r.pipeline_parallel},
                        {"batch", r.batch},
                        {"prompt", r.prompt_tokens},
                        {"gen", r.gen_tokens},
                        {"dtype", text(r.dtype)},
                        {"flash", r.flash_attention},
                        {"engine", r.engine},
                        {"expert_parallel", r.expert_parallel},
                        {"power_cap", r.power_cap_w},
                        {"clock_mhz", r.clock_mhz},
                        {"spec", text(r.spec)},
                        {"spec_tokens", r.spec_tokens},
                        {"spec_acceptance", optional(r.spec_acceptance)},
                        {"scope", r.scope},
                        {"node", text(r.node)},
                        {"region", text(r.region)},
                        {"ci", optional(r.ci_g_per_kwh)},
                        {"pue", text(r.pue)},
                        {"lifetime", optional(r.lifetime_years)},
                        {"embodied_basis", r.embodied_basis},
                        {"embodied_kg", optional(r.embodied_kg)},
                        {"predictor", r.predictor}};
  const llmco2::api::CompareOptions c;
  const Json compare = {{"gpu_types", c.gpu_types.empty() ? Json(nullptr) : Json(c.gpu_types)},
                        {"counts", c.counts},
                        {"slo_ms", optional(c.slo_ms)}};
  py::dict out;
  out["request"] = to_python(request);
  out["compare"] = to_python(compare);
  out["trace"] = to_python(defaults_of(trace_keywords()));
  out["serve_sim"] = to_python(defaults_of(serve_sim_keywords()));
  out["sample"] = to_python(defaults_of(sample_keywords()));
  out["label_plan"] = to_python(defaults_of(label_keywords()));
  out["import_source"] = to_python(defaults_of(import_keywords()));
  out["calibrate"] = to_python(defaults_of(calibrate_keywords()));
  out["fit_kernels"] = to_python(defaults_of(fit_kernels_keywords()));
  out["score_campaign"] = to_python(defaults_of(score_campaign_keywords()));
  out["serve_validate"] = to_python(defaults_of(serve_validate_keywords()));
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "llmco2's C++ core: energy, latency and CO2 of LLM inference requests (see the llmco2 package)";
  static py::exception<llmco2::Error> error(m, "Error", PyExc_ValueError);
  error.attr("__doc__") =
      "Bad input (an unknown model or GPU, a value out of range, an unknown keyword...): a "
      "ValueError whose message is the one the CLI prints after 'llmco2: error: '.";
  // NOLINTNEXTLINE(performance-unnecessary-value-param): pybind11's translator type takes the pointer by value
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const llmco2::Error& e) {
      error(e.what());
    } catch (const nlohmann::json::exception& e) {  // a JSON conversion no keyword reader checked
      error(e.what());
    }
  });
  m.def("predict", &predict, "one request (keywords: the CLI's flags) -> dict, the CLI's --format json");
  m.def("predict_many", &predict_many, py::arg("columns"), py::arg("threads") = 0,
        "columns (dict of scalars or sequences) -> dict of numpy arrays, one value per row");
  m.def("compare", &compare, "a request on every GPU type and count -> dict (the CLI's compare --format json)");
  m.def("score_trace", &score_trace, py::arg("path"), "a request log file on one setup -> dict (trace --format json)");
  m.def("score_requests", &score_requests, py::arg("prompt_tokens"), py::arg("gen_tokens"),
        py::arg("time_s") = py::none(), py::arg("source") = "columns", "a log held in memory -> dict");
  m.def(
      "models", [] { return to_python(session().models()); },
      "The bundled model architectures -> list of dicts (llmco2 models --format json): id, family, layers, ...");
  m.def(
      "gpus", [] { return to_python(session().gpus()); },
      "The bundled GPU types -> list of dicts (llmco2 gpus --format json): id, name, dense peaks, memory, power");
  m.def(
      "nodes", [] { return to_python(session().nodes()); },
      "The bundled server nodes -> list of dicts (llmco2 nodes --format json): host power, wall power idle and full");
  m.def(
      "regions", [] { return to_python(session().regions()); },
      "The grid regions and PUE figures -> {\"regions\": [{id, kind, provider, name, ci_g_per_kwh (gCO2e/kWh), "
      "year, source}, ...], \"pue\": [{id, pue, year, source}, ...]}");
  m.def(
      "versions", [] { return to_python(session().versions()); },
      "llmco2's version and the FNV-1a checksums of its bundled data and of each predictor -> dict");
  m.def(
      "request_keys", [] { return llmco2::api::request_keys(); },
      "The keywords a request takes (the CLI's flags, as api::request_from_json reads them) -> list of str");
  m.def("serve_sim", &serve_sim, py::arg("log") = "",
        "a request log replayed through a deployment -> dict (the CLI's serve-sim --format json) + warnings");
  m.def("_defaults", &defaults,
        "api::Request's and every options struct's defaults by keyword (None: empty or absent) -> dict of dicts");

  py::module_ r = m.def_submodule("research", "the research calls (llmco2/research.h): see llmco2.research");
  r.def("kernel_graph", &kernel_graph, "one layer's kernel graph -> dict (graph --format json; else text)");
  r.def("simulate", &simulate, "what NVML would read, by the reference simulator -> dict (simulate --format json)");
  r.def("sample", &sample, "a plan drawn by focused sampling, written to out -> {configurations, written}");
  r.def("label_plan", &label_plan, "a plan labelled by the simulator -> {rows_written, rejects, written}");
  r.def("measurement_sources", &measurement_sources,
        "the public measurement sources import_source knows -> list of {id, folder, summary, importable}");
  r.def("import_source", &import_source, py::arg("source"),
        "one source into the dataset format -> {id, written, rows, rejected, reject_reasons}");
  r.def("calibrate", &calibrate, "the simulator's parameters fitted on the measurements -> summary dict");
  r.def("fit_kernels", &fit_kernels, "the kernel-time parameters fitted on Vidur's profiles -> summary dict");
  r.def("score_campaign", &score_campaign, py::arg("dirs"),
        "GPU kernel campaigns scored against the simulator -> {runs, text, warnings}");
  r.def("serve_validate", &serve_validate, "measured load tests replayed through serve-sim -> {text, warnings}");
  r.def(
      "check_outputs",
      [](const std::string& manifest) { return released([&] { return research::check_outputs(manifest); }); },
      py::arg("manifest"), "the outputs a run's manifest lists that are no longer as it wrote them -> list of str");
}
