// measure/campaign.cc - driving the runner, reading NVML, and writing rows atomically, with a manifest after each.
#include "measure/campaign.h"

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/atomic_file.h"
#include "core/csv.h"
#include "core/error.h"
#include "core/json_io.h"
#include "core/output_manifest.h"
#include "core/progress.h"
#include "dataset/architecture.h"
#include "hardware/gpu_catalog.h"
#include "measure/energy_meter.h"
#include "measure/runner_process.h"
#include "model/model_catalog.h"

namespace llmco2::measure {
namespace {

std::filesystem::path beside(const std::filesystem::path& out, const std::string& suffix) {
  return out.parent_path() / (out.filename().string() + suffix);
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// The output's header, or the keys of the rows it already holds (after repairing a torn last line).
std::set<std::string> open_output(const std::filesystem::path& out) {
  std::set<std::string> done;
  if (!std::filesystem::exists(out) || std::filesystem::file_size(out) == 0) {
    const std::string header = dataset_to_csv({});
    write_file_atomic(out, header);
    return done;
  }
  if (const size_t dropped = repair_torn_tail(out))
    std::cerr << fmt::format("measure: {}: dropped a partial last line ({} bytes) left by an interrupted run\n",
                             out.string(), dropped);
  record_existing_output(out);  // part of this run's outputs even when it measures nothing new
  const DatasetReadResult existing = read_dataset(out);
  for (const auto& r : existing.rejects) std::cerr << "measure: warning: " << r.message() << "\n";
  for (const auto& r : existing.rows)
    done.insert(configuration_key(r.model, r.gpu, r.gpus, std::lround(r.batch), std::lround(r.prompt_tokens),
                                  std::lround(r.gen_tokens), r.dtype));
  return done;
}

struct Failure {
  const PlanRow& row;
  std::string error;
};

void record_failure(const std::filesystem::path& path, const Failure& f) {
  std::string text;
  if (!std::filesystem::exists(path))
    append_csv_record(text,
                      {"plan_line", "model", "gpu", "gpus", "batch", "prompt", "gen", "dtype", "error", "time_utc"});
  append_csv_record(text, {std::to_string(f.row.line), f.row.model, f.row.gpu, std::to_string(f.row.gpus),
                           std::to_string(f.row.batch), std::to_string(f.row.prompt), std::to_string(f.row.gen),
                           f.row.dtype, f.error, utc_now()});
  append_atomically(path, text);
}

// One configuration resolved against the catalogs and the machine.
struct Target {
  ModelSpec model;
  Gpu gpu;
  std::string dtype;
  std::vector<int> devices;
  std::vector<NvmlDeviceInfo> infos;
};

Target resolve_target(const PlanRow& row, const CampaignOptions& o, const Nvml& nvml) {
  Target t{ModelCatalog::bundled().resolve(row.model), GpuCatalog::bundled().resolve(row.gpu), "", {}, {}};
  t.dtype = precision_or_default(row.dtype, t.model.default_dtype).to_string();
  if (o.devices.empty()) {
    for (int d = 0; d < row.gpus; ++d) t.devices.push_back(d);
  } else {
    if (static_cast<int>(o.devices.size()) != row.gpus)
      fail("--gpus lists {} GPUs, the configuration needs {}", o.devices.size(), row.gpus);
    t.devices = o.devices;
  }
  for (int d : t.devices) {
    NvmlDeviceInfo info = nvml.device_info(d);
    const Gpu found = GpuCatalog::bundled().resolve(info.name);
    if (found.id != t.gpu.id) fail("the plan asks for {}, but GPU {} is '{}' ({})", t.gpu.id, d, info.name, found.id);
    t.infos.push_back(std::move(info));
  }
  return t;
}

// The runner process, restarted when the GPUs change or after a failure; loaded with one model at a time.
class RunnerSession {
 public:
  explicit RunnerSession(const CampaignOptions& o) : o_(o) {}

  const Json& hello() const { return hello_; }
  const Json& loaded() const { return loaded_; }
  RunnerProcess& process() { return *process_; }
  void drop() { process_.reset(); }

  void ensure(const Target& t) {
    if (process_ && t.devices != devices_) process_.reset();
    if (!process_) start(t.devices);
    const std::string model_key = t.model.id + "|" + t.dtype;
    if (model_key == model_key_) return;
    process_->send({{"op", "load"},
                    {"model", t.model.id},
                    {"config", t.model.source},
                    {"dtype", t.dtype},
                    {"gpus", t.devices.size()}});
    loaded_ = expect(process_->receive(o_.timeout_s), "loaded");
    model_key_ = model_key;
  }

  // The runner's answer, or its error as an Error (a RunnerFailure when it is not the protocol).
  static Json expect(const Json& message, const std::string& event) { return expect_runner_event(message, event); }

 private:
  void start(const std::vector<int>& devices) {
    const std::string visible = fmt::format("{}", fmt::join(devices, ","));
    process_ = std::make_unique<RunnerProcess>(
        o_.runner, std::vector<std::pair<std::string, std::string>>{{"CUDA_VISIBLE_DEVICES", visible}},
        beside(o_.out, ".runner.log"));
    devices_ = devices;
    model_key_.clear();
    try {
      hello_ = expect(process_->receive(o_.timeout_s), "hello");
    } catch (...) {
      process_.reset();  // a runner that cannot start is started afresh for the next configuration
      throw;
    }
  }

  const CampaignOptions& o_;
  std::unique_ptr<RunnerProcess> process_;
  std::vector<int> devices_;
  std::string model_key_;
  Json hello_, loaded_;
};

struct RunResult {
  double energy_j = 0, latency_s = 0;
};

RunResult run_once(RunnerSession& session, EnergyMeter& meter, long batch, long prompt, long gen, double timeout_s) {
  static long next_id = 0;
  const std::string id = std::to_string(++next_id);
  RunnerProcess& runner = session.process();
  runner.send({{"op", "prepare"}, {"id", id}, {"batch", batch}, {"prompt", prompt}, {"gen", gen}});
  RunnerSession::expect(runner.receive(timeout_s), "ready");
  meter.start();
  runner.send({{"op", "go"}, {"id", id}});
  Json done;
  try {
    done = RunnerSession::expect(runner.receive(timeout_s), "done");
  } catch (...) {
    meter.stop_j();
    throw;
  }
  const double energy = meter.stop_j();
  const RunnerDone d = runner_done(done);
  if (d.gen_tokens != gen || d.prompt_tokens != prompt)
    fail("the runner ran prompt {} / gen {} tokens, asked for {} / {}", d.prompt_tokens, d.gen_tokens, prompt, gen);
  return {energy, d.elapsed_s};
}

std::string provenance(const Target& t, const RunnerSession& session, const Nvml& nvml, bool counters,
                       const std::map<int, double>& idle_w) {
  std::string devices;
  for (size_t i = 0; i < t.infos.size(); ++i) {
    const auto& d = t.infos[i];
    devices +=
        fmt::format("{}GPU {} '{}' power limit {} W max clocks SM {} / memory {} MHz idle {:.1f} W", i ? "; " : "",
                    d.index, d.name, d.power_limit_w ? fmt::format("{:.0f}", *d.power_limit_w) : "?",
                    d.sm_clock_max_mhz ? std::to_string(*d.sm_clock_max_mhz) : "?",
                    d.memory_clock_max_mhz ? std::to_string(*d.memory_clock_max_mhz) : "?", idle_w.at(d.index));
  }
  return fmt::format(
      "NVML driver {}; {}; energy from {}; idle power measured before the campaign, not subtracted; "
      "runner {} {}",
      nvml.driver_version(), devices, counters ? "the energy counters" : "power sampled and integrated",
      runner_text_field(session.hello(), "engine", "?"), session.hello().value("versions", Json::object()).dump());
}

DatasetRow measure(const PlanRow& row, const Target& t, RunnerSession& session, const Nvml& nvml,
                   const CampaignOptions& o, const std::map<int, double>& idle_w) {
  session.ensure(t);
  EnergyMeter meter(nvml, t.devices, o.sample_interval);
  const bool has_decode = row.gen > 1;
  std::vector<double> pre_e, pre_t, full_e, full_t;
  for (int i = 0; i < o.warmup + o.repeats; ++i) {
    const RunResult prefill = run_once(session, meter, row.batch, row.prompt, 1, o.timeout_s);
    const RunResult full = has_decode ? run_once(session, meter, row.batch, row.prompt, row.gen, o.timeout_s) : prefill;
    if (i < o.warmup) continue;
    pre_e.push_back(prefill.energy_j);
    pre_t.push_back(prefill.latency_s);
    full_e.push_back(full.energy_j);
    full_t.push_back(full.latency_s);
  }
  DatasetRow r;
  r.source = o.source;
  r.source_ref = fmt::format("{}:{}", o.plan.filename().string(), row.line);
  r.model = r.model_source_name = t.model.id;
  r.model_relation = "same";
  r.arch = architecture_fields(t.model);
  r.dtype = t.dtype;
  r.gpu = t.gpu.id;
  r.gpus = row.gpus;
  r.interconnect = row.gpus > 1 ? t.gpu.network_link(row.gpus).kind : "";
  const bool layer_split = runner_text_field(session.loaded(), "parallelism", "tensor") == "layer_split";
  r.parallelism = layer_split ? Parallelism::layer_split : Parallelism::tensor;
  r.tensor_parallel = layer_split ? 1 : row.gpus;
  r.engine = runner_text_field(session.hello(), "engine", "unknown");
  r.batch = static_cast<double>(row.batch);
  r.prompt_tokens = static_cast<double>(row.prompt);
  r.gen_tokens = static_cast<double>(row.gen);
  r.measures = row.batch > 1 ? Measures::fixed_batch : Measures::isolated;
  const RepeatStats pe = repeat_stats(pre_e), pt = repeat_stats(pre_t), fe = repeat_stats(full_e),
                    ft = repeat_stats(full_t);
  r.energy_j = {pe.mean, std::max(0.0, fe.mean - pe.mean), std::max(fe.mean, pe.mean)};
  r.latency_s = {pt.mean, std::max(0.0, ft.mean - pt.mean), std::max(ft.mean, pt.mean)};
  r.repeats = o.repeats;
  r.energy_spread = fe.spread;
  r.latency_spread = ft.spread;
  if (!meter.uses_counters() && ft.mean < 1.0) r.caveats.push_back("short_run");
  r.notes = provenance(t, session, nvml, meter.uses_counters(), idle_w);
  if (has_decode && fe.mean < pe.mean)
    r.notes += "; the full run drew less energy than the prefill run: decode set to 0";
  return r;
}

std::string row_line(const DatasetRow& row) {
  const std::string csv = dataset_to_csv({row});
  return csv.substr(csv.find('\n') + 1);
}

void write_campaign_facts(const CampaignOptions& o, const Nvml& nvml, const std::vector<int>& devices,
                          const std::vector<double>& idle_w) {
  Json gpus = Json::array();
  for (size_t i = 0; i < devices.size(); ++i) {
    const NvmlDeviceInfo d = nvml.device_info(devices[i]);
    gpus.push_back({{"index", d.index},
                    {"name", d.name},
                    {"idle_w", idle_w[i]},
                    {"power_limit_w", d.power_limit_w ? Json(*d.power_limit_w) : Json()},
                    {"sm_clock_max_mhz", d.sm_clock_max_mhz ? Json(*d.sm_clock_max_mhz) : Json()},
                    {"memory_clock_max_mhz", d.memory_clock_max_mhz ? Json(*d.memory_clock_max_mhz) : Json()},
                    {"energy_counter", d.has_energy_counter}});
  }
  const Json facts = {{"started_utc", utc_now()},
                      {"driver", nvml.driver_version()},
                      {"gpus", gpus},
                      {"idle_seconds", o.idle_s},
                      {"runner", o.runner},
                      {"repeats", o.repeats},
                      {"warmup", o.warmup},
                      {"plan", o.plan.string()},
                      {"idle_note", "idle power is reported, not subtracted from any energy"}};
  write_file_atomic(beside(o.out, ".campaign.json"), facts.dump(2) + "\n");
}

std::vector<int> devices_in_use(const CampaignOptions& o, const std::vector<PlanRow>& rows) {
  if (!o.devices.empty()) return o.devices;
  int most = 1;
  for (const auto& r : rows) most = std::max(most, r.gpus);
  std::vector<int> devices;
  for (int d = 0; d < most; ++d) devices.push_back(d);
  return devices;
}

}  // namespace

RepeatStats repeat_stats(const std::vector<double>& values) {
  RepeatStats s;
  if (values.empty()) return s;
  for (double v : values) s.mean += v;
  s.mean /= static_cast<double>(values.size());
  if (values.size() < 2 || s.mean == 0) return s;
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.spread = std::sqrt(squares / static_cast<double>(values.size() - 1)) / s.mean;
  return s;
}

std::string configuration_key(const std::string& model, const std::string& gpu, int gpus, long batch, long prompt,
                              long gen, const std::string& dtype) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}", model, gpu, gpus, batch, prompt, gen, dtype);
}

size_t repair_torn_tail(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  if (text.empty() || text.back() == '\n') return 0;
  const size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  std::filesystem::resize_file(path, keep);
  return text.size() - keep;
}

namespace {

// An exclusive advisory lock (flock) on `path`, created when missing, held until destruction. The lock file is a
// file of its own: the locked data file is replaced by rename, and a lock on the replaced inode would guard nothing.
class ExclusiveLock {
 public:
  explicit ExclusiveLock(const std::filesystem::path& path)
      : fd_(::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (fd_ < 0) fail("{}: cannot create the lock file ({})", path.string(), std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) fail("{}: cannot lock ({})", path.string(), std::strerror(errno));
  }
  ~ExclusiveLock() { ::close(fd_); }
  ExclusiveLock(const ExclusiveLock&) = delete;
  ExclusiveLock& operator=(const ExclusiveLock&) = delete;

 private:
  int fd_;
};

}  // namespace

void append_atomically(const std::filesystem::path& path, const std::string& text) {
  const ExclusiveLock lock(path.string() + ".lock");  // two campaigns appending to one file: neither loses a row
  AtomicFile file(path);
  if (std::filesystem::exists(path)) file.stream() << read_text_file(path);
  file.stream() << text;
  file.commit();
}

CampaignResult run_campaign(const CampaignOptions& o) {
  if (o.repeats < 1 || o.warmup < 0) fail("--repeats must be at least 1 and --warmup at least 0");
  std::signal(SIGPIPE, SIG_IGN);  // a dead runner's pipe is an error to report, not a reason to die
  const PlanReadResult plan = read_plan(o.plan);
  for (const auto& r : plan.rejects) std::cerr << "measure: skipped plan row: " << r.message() << "\n";
  if (plan.rows.empty()) fail("{}: no configuration to measure", o.plan.string());
  const Nvml nvml(o.nvml_library);
  CampaignResult result;
  result.planned = static_cast<long>(plan.rows.size());
  result.rejected_plan_rows = static_cast<long>(plan.rejects.size());
  result.failures = beside(o.out, ".failures.csv");
  RunManifest manifest(manifest_beside(o.out));  // rewritten after every row: the outputs as they stand
  record_existing_output(result.failures);
  std::set<std::string> done = open_output(o.out);
  const std::vector<int> devices = devices_in_use(o, plan.rows);
  for (int d : devices)
    if (d < 0 || d >= nvml.device_count()) fail("GPU {} does not exist: NVML sees {} GPUs", d, nvml.device_count());
  result.idle_w = idle_power_w(nvml, devices, o.idle_s);
  write_campaign_facts(o, nvml, devices, result.idle_w);
  std::map<int, double> idle_by_device;
  for (size_t i = 0; i < devices.size(); ++i) idle_by_device[devices[i]] = result.idle_w[i];
  RunnerSession session(o);
  Progress progress("measuring", result.planned, o.progress);
  long index = 0;
  for (const PlanRow& row : plan.rows) {
    progress.update(index++);
    try {
      const Target t = resolve_target(row, o, nvml);
      const std::string key =
          configuration_key(t.model.id, t.gpu.id, row.gpus, row.batch, row.prompt, row.gen, t.dtype);
      if (done.count(key)) {
        ++result.already_done;
        continue;
      }
      append_atomically(o.out, row_line(measure(row, t, session, nvml, o, idle_by_device)));
      done.insert(key);
      ++result.measured;
    } catch (const RunnerFailure& e) {
      session.drop();  // restarted for the next configuration
      record_failure(result.failures, {row, e.what()});
      ++result.failed;
    } catch (const Error& e) {
      record_failure(result.failures, {row, e.what()});
      ++result.failed;
    }
    manifest.commit();
  }
  manifest.commit();
  progress.finish();
  return result;
}

}  // namespace llmco2::measure
