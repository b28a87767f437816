// python/module.cc - the Python extension `llmco2._core` (pybind11): the public API (llmco2/api.h) with keyword
// requests, answers as dicts equal to the CLI's JSON, and llmco2::Error raised as llmco2.Error (a ValueError). The
// GIL is released while the C++ core works; the long calls run on a thread of their own, so that Ctrl-C stops them.
#include <pybind11/pybind11.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "llmco2/api.h"

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
  if (py::hasattr(value, "item")) return to_json(value.attr("item")(), key, depth + 1);  // numpy scalars
  throw llmco2::Error(key + ": cannot pass a value of type " + py::str(value.get_type().attr("__name__")).cast<std::string>());
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

py::dict predict(const py::kwargs& kwargs) {
  const llmco2::api::Request request = llmco2::api::request_from_json(kwargs_json(kwargs, "predict"), "predict");
  llmco2::api::Result result;
  {
    py::gil_scoped_release release;
    result = session().predict(request);
  }
  py::dict out = to_python(result.json).cast<py::dict>();
  out["warnings"] = result.warnings;
  return out;
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
    c.scalar = py::isinstance<py::str>(c.values) || py::isinstance<py::dict>(c.values) || !py::hasattr(c.values, "__len__");
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

llmco2::api::TraceOptions trace_options(Json& j) {
  llmco2::api::TraceOptions o;
  if (Json v = take(j, "report_dir"); !v.is_null()) o.report_dir = v.get<std::string>();
  if (Json v = take(j, "by_request_csv"); !v.is_null()) o.by_request_csv = v.get<std::string>();
  if (Json v = take(j, "grid"); !v.is_null()) o.grid_ratio = v.get<double>();
  if (Json v = take(j, "bin_s"); !v.is_null()) o.bin_s = v.get<double>();
  if (Json v = take(j, "keep_time_outliers"); !v.is_null()) o.keep_time_outliers = v.get<bool>();
  return o;
}

py::dict score_trace(const std::string& path, const py::kwargs& kwargs) {
  Json j = kwargs_json(kwargs, "score_trace");
  const llmco2::api::TraceOptions options = trace_options(j);
  const llmco2::api::Request setup = llmco2::api::request_from_json(j, "score_trace");
  const llmco2::api::Result result = interruptible([&] { return session().score_trace(path, setup, options); });
  return to_python(result.json).cast<py::dict>();
}

py::dict score_requests(const std::vector<long>& prompt_tokens, const std::vector<long>& gen_tokens,
                        const std::optional<std::vector<double>>& time_s, const std::string& source,
                        const py::kwargs& kwargs) {
  Json j = kwargs_json(kwargs, "score_requests");
  const llmco2::api::TraceOptions options = trace_options(j);
  const llmco2::api::Request setup = llmco2::api::request_from_json(j, "score_requests");
  llmco2::api::LogColumns log{prompt_tokens, gen_tokens, time_s.value_or(std::vector<double>{}), source};
  const llmco2::api::Result result = interruptible([&] { return session().score_requests(log, setup, options); });
  return to_python(result.json).cast<py::dict>();
}

py::dict compare(const py::kwargs& kwargs) {
  Json j = kwargs_json(kwargs, "compare");
  Json own = Json::object();  // the comparison's keywords, read as the HTTP API reads them
  for (const char* key : {"gpu_types", "counts", "slo_ms"})
    if (Json v = take(j, key); !v.is_null()) own[key] = v;
  const llmco2::api::CompareOptions o = llmco2::api::compare_options_from_json(own, "compare");
  const llmco2::api::Request request = llmco2::api::request_from_json(j, "compare");
  const llmco2::api::Result result = interruptible([&] { return session().compare(request, o); });
  return to_python(result.json).cast<py::dict>();
}

// The defaults of api::Request, api::CompareOptions and api::TraceOptions under the keys the bindings take (an empty
// string or an absent optional as None): the tests hold the Python signatures' defaults to them.
py::dict defaults() {
  const llmco2::api::Request r;
  const auto optional = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  const auto text = [](const std::string& v) { return v.empty() ? Json(nullptr) : Json(v); };
  const Json request = {{"model", r.model}, {"model_config", r.model_config ? *r.model_config : Json(nullptr)},
                        {"gpu", r.gpu}, {"gpus", r.gpus}, {"batch", r.batch}, {"prompt", r.prompt_tokens},
                        {"gen", r.gen_tokens}, {"dtype", text(r.dtype)}, {"flash", r.flash_attention},
                        {"engine", r.engine}, {"expert_parallel", r.expert_parallel}, {"power_cap", r.power_cap_w},
                        {"clock_mhz", r.clock_mhz},
                        {"scope", r.scope}, {"node", text(r.node)}, {"region", text(r.region)},
                        {"ci", optional(r.ci_g_per_kwh)}, {"pue", text(r.pue)},
                        {"lifetime", optional(r.lifetime_years)},
                        {"embodied_basis", r.embodied_basis}, {"embodied_kg", optional(r.embodied_kg)},
                        {"predictor", r.predictor}};
  const llmco2::api::CompareOptions c;
  const Json compare = {{"gpu_types", c.gpu_types.empty() ? Json(nullptr) : Json(c.gpu_types)},
                        {"counts", c.counts}, {"slo_ms", optional(c.slo_ms)}};
  const llmco2::api::TraceOptions t;
  const Json trace = {{"grid", t.grid_ratio}, {"bin_s", t.bin_s}, {"keep_time_outliers", t.keep_time_outliers},
                      {"report_dir", text(t.report_dir)}, {"by_request_csv", text(t.by_request_csv)}};
  py::dict out;
  out["request"] = to_python(request);
  out["compare"] = to_python(compare);
  out["trace"] = to_python(trace);
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "llmco2's C++ core: energy, latency and CO2 of LLM inference requests (see the llmco2 package)";
  static py::exception<llmco2::Error> error(m, "Error", PyExc_ValueError);
  error.attr("__doc__") = "Bad input (an unknown model or GPU, a value out of range, an unknown keyword...): a "
                          "ValueError whose message is the one the CLI prints after 'llmco2: error: '.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const llmco2::Error& e) {
      error(e.what());
    } catch (const nlohmann::json::exception& e) {  // a trace option of the wrong type (e.g. grid="x")
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
  m.def("models", [] { return to_python(session().models()); },
        "The bundled model architectures -> list of dicts (llmco2 models --format json): id, family, layers, ...");
  m.def("gpus", [] { return to_python(session().gpus()); },
        "The bundled GPU types -> list of dicts (llmco2 gpus --format json): id, name, dense peaks, memory, power");
  m.def("nodes", [] { return to_python(session().nodes()); },
        "The bundled server nodes -> list of dicts (llmco2 nodes --format json): host power, wall power idle and full");
  m.def("regions", [] { return to_python(session().regions()); },
        "The grid regions and PUE figures -> {\"regions\": [{id, kind, provider, name, ci_g_per_kwh (gCO2e/kWh), "
        "year, source}, ...], \"pue\": [{id, pue, year, source}, ...]}");
  m.def("versions", [] { return to_python(session().versions()); },
        "llmco2's version and the FNV-1a checksums of its bundled data and of each predictor -> dict");
  m.def("request_keys", [] { return llmco2::api::request_keys(); },
        "The keywords a request takes (the CLI's flags, as api::request_from_json reads them) -> list of str");
  m.def("_defaults", &defaults,
        "api::Request's, CompareOptions' and TraceOptions' defaults by keyword (None: empty or absent) -> dict");
}
