// api/session.cc - the Session: predictors loaded once per name, predict and predict-many, the catalogs, versions.
#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "api/evidence.h"
#include "api/format.h"
#include "api/resolve.h"
#include "api/session_impl.h"
#include "carbon/region_catalog.h"
#include "core/checksum.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/paths.h"
#include "hardware/gpu_catalog.h"
#include "hardware/host_power.h"
#include "hardware/node.h"
#include "model/hf_config.h"
#include "model/model_catalog.h"
#include "predictor/input.h"
#include "sim/site_profile.h"

#ifndef LLMCO2_VERSION
#define LLMCO2_VERSION "unknown"
#endif

namespace llmco2::api {

const LoadedPredictor& Session::Impl::predictor(const std::string& name) const {
  std::lock_guard lock(mutex);
  auto it = predictors.find(name);
  if (it == predictors.end()) {
    LoadedPredictor loaded = load_predictor(name, settings, params());
    if (site && name == "sim" && settings.model_file.empty()) loaded.site = std::make_shared<const SiteProfile>(*site);
    it = predictors.emplace(name, std::move(loaded)).first;
  }
  return it->second;  // std::map: the reference stays valid as others are added
}

namespace {

// The figures serving benchmarks quote, so that answers compare directly with them.
struct ServingFigures {
  std::optional<double> ttft_s, tpot_s;
  double tokens_per_s = 0, energy_per_1k_output_tokens_j = 0;
};

// What one sequence sees when the batch runs in `waves` (the KV cache holds `per_wave` sequences at once, the last
// wave `last`): the waves run one after the other, each a prefill then its decode, taken as alike (the total over
// the waves). A sequence of wave k waits for the k waves before it, then its own prefill: the mean TTFT over the
// batch's sequences; its tokens come at its own wave's pace: TPOT = one wave's decode / (gen - 1). One wave: the
// batch's prefill and decode.
ServingFigures per_sequence_figures(const ResolvedRequest& r, const Prediction& p) {
  ServingFigures s;
  const double waves = static_cast<double>(std::max(1L, r.waves));
  const double prefill_s = p.latency_s.prefill.value_or(0) / waves, decode_s = p.latency_s.decode.value_or(0) / waves;
  if (p.latency_s.prefill) {
    double waiting_s = 0;  // sum over sequences of the waves before theirs
    for (long k = 0; k < r.waves; ++k) {
      const long sequences = k + 1 < r.waves ? r.sequences_per_wave : r.last_wave_sequences;
      waiting_s += static_cast<double>(sequences) * static_cast<double>(k) * (prefill_s + decode_s);
    }
    s.ttft_s = prefill_s + waiting_s / static_cast<double>(r.request.batch);
  }
  if (p.latency_s.decode && r.request.gen_tokens > 1)
    s.tpot_s = decode_s / static_cast<double>(r.request.gen_tokens - 1);
  return s;
}

// `energy_j`: the footprint's (in its scope). Throughput and energy per token are the whole batch's.
ServingFigures serving_figures(const ResolvedRequest& r, const Prediction& p, const PhaseValues& energy_j) {
  ServingFigures s = per_sequence_figures(r, p);
  const double output_tokens = static_cast<double>(r.request.batch * r.request.gen_tokens);
  if (p.latency_s.total && *p.latency_s.total > 0) s.tokens_per_s = output_tokens / *p.latency_s.total;
  if (energy_j.total) s.energy_per_1k_output_tokens_j = *energy_j.total / output_tokens * 1000;
  return s;
}

Json serving_json(const ServingFigures& s, const Prediction& p) {
  Json j;
  j["ttft_s"] = s.ttft_s ? Json(*s.ttft_s) : Json();  // one sequence's, as serving benchmarks report them
  j["tpot_s"] = s.tpot_s ? Json(*s.tpot_s) : Json();
  j["output_tokens_per_s"] = s.tokens_per_s;
  j["energy_per_1k_output_tokens_j"] = s.energy_per_1k_output_tokens_j;
  j["energy_per_1k_output_tokens_wh"] = s.energy_per_1k_output_tokens_j / 3600;
  j["bounded"] = p.bounded;
  j["bounded_why"] = p.notes;
  return j;
}

std::string serving_line(const ServingFigures& s) {
  auto ms = [](const std::optional<double>& v) { return v ? fmt::format("{:.1f} ms", *v * 1e3) : std::string("-"); };
  return fmt::format(
      "  time to first token {}, time per output token {}, {:.1f} output tokens/s, {:.1f} J ({:.3f} Wh) "
      "per 1,000 output tokens\n",
      ms(s.ttft_s), ms(s.tpot_s), s.tokens_per_s, s.energy_per_1k_output_tokens_j,
      s.energy_per_1k_output_tokens_j / 3600);
}

Figures key_figures(const Footprint& f, const ServingFigures& s) {
  Figures out;
  out.energy_j = f.energy_j.total.value_or(0);
  out.energy_prefill_j = f.energy_j.prefill.value_or(0);
  out.energy_decode_j = f.energy_j.decode.value_or(0);
  out.latency_s = f.latency_s.total.value_or(0);
  out.ttft_s = s.ttft_s.value_or(0);
  out.tpot_s = s.tpot_s;
  out.co2_operational_g = f.operational_g.total.value_or(0);
  out.co2_total_g = f.total_g.total.value_or(0);
  if (!f.embodied_unknown) out.co2_embodied_g = f.embodied_g.total.value_or(0);
  return out;
}

}  // namespace

Session::Session(Settings settings) : impl_(std::make_unique<Impl>()) {
  if (!settings.site.empty()) impl_->site = read_site_profile(settings.site);  // a bad one fails here, not later
  impl_->settings = std::move(settings);
}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

const SimParams& Session::Impl::params() const {
  std::call_once(params_once, [this] {  // a throw leaves it unset: the next call tries again
    SimParams p = load_sim_params_or_default(settings.params);
    resolved_params = site ? apply_site(std::move(p), *site) : std::move(p);
  });
  return resolved_params;
}

Json Session::Impl::site_json(const ResolvedRequest& r, std::vector<std::string>& warnings) const {
  if (!site) return nullptr;
  Json corrections = Json::array();
  for (const SiteCorrection& c : site->corrections)
    if (c.target == r.gpu.id || c.target == r.request.engine)
      corrections.push_back({{"target", c.target},
                             {"parameter", site_knob(c.knob).name},
                             {"value", c.value},
                             {"data_share", c.data_share}});
  if (corrections.empty())
    warnings.push_back(
        fmt::format("site profile {} has no correction for {} or engine {}: the global parameters answer", site->name,
                    r.gpu.id, r.request.engine));
  return {{"name", site->name}, {"file", settings.site}, {"corrections", corrections}};
}

Result Session::predict(const Request& req) const {
  const ResolvedRequest r = resolve_request(req, impl_->settings.allow_paths);
  const CarbonInputs& carbon = r.carbon;
  const LoadedPredictor& p = impl_->predictor(req.predictor);
  const Prediction prediction = p.predictor->predict(input_for(r));
  const RequestEvidence evidence = request_evidence(p, r);
  const Footprint f = footprint(prediction, carbon, evidence.bands ? &*evidence.bands : nullptr);
  const ServingFigures serving = serving_figures(r, prediction, f.energy_j);
  Result out;
  out.warnings = r.notes;
  out.figures = key_figures(f, serving);
  out.json = request_json(r);
  out.json["predictor"] = p.predictor->name();
  out.json.update(footprint_json(f, evidence.level));
  out.json.update(serving_json(serving, prediction));
  Json inputs = carbon_inputs_json(carbon);
  inputs.erase("gpus");  // the GPUs the embodied CO2 counts (all stages'): request_json's `gpus` is per stage
  out.json.update(inputs);
  out.json["interval_note"] = evidence.interval_note;
  out.json["evidence"] = evidence_json(evidence);
  if (Json site = impl_->site_json(r, out.warnings); !site.is_null()) out.json["site"] = std::move(site);
  out.text = request_line(r) + "; predictor " + p.predictor->name() +
             (impl_->site ? "; site " + impl_->site->name : "") + "\n" + footprint_table(f) + serving_line(serving);
  for (const auto& note : prediction.notes) out.text += "  bounded to the power envelope: " + note + "\n";
  out.text += carbon_inputs_lines(carbon) + evidence_lines(evidence);
  return out;
}

void request_interrupt(bool on) { llmco2::request_interrupt(on); }

std::vector<Result> Session::predict_many(const std::vector<Request>& requests, int threads) const {
  std::vector<Result> out(requests.size());
  std::vector<std::exception_ptr> errors(requests.size());
  const size_t workers =
      std::clamp<size_t>(threads > 0 ? static_cast<size_t>(threads) : std::max(1u, std::thread::hardware_concurrency()),
                         1, std::max<size_t>(1, requests.size()));
  auto work = [&](size_t first) {
    for (size_t i = first; i < requests.size() && !interrupt_requested(); i += workers) {
      try {
        out[i] = predict(requests[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& t : pool) t.join();
  check_interrupt();
  for (size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i]) continue;
    try {
      std::rethrow_exception(errors[i]);
    } catch (const Error& e) {
      fail("requests[{}]: {}", i, e.what());
    }
  }
  return out;
}

Json Session::models() const {
  Json list = Json::array();
  for (const auto& entry : ModelCatalog::bundled().entries()) {
    const ModelSpec& m = ModelCatalog::bundled().config_of(entry);
    list.push_back({{"id", entry.id},
                    {"hf_repo", entry.hf_repo},
                    {"family", m.family},
                    {"layers", m.layers},
                    {"hidden", m.hidden},
                    {"heads", m.heads},
                    {"kv_heads", m.max_kv_heads()},
                    {"params", m.total_params()},
                    {"active_params", m.active_params()},
                    {"experts", m.moe ? Json(m.moe->experts) : Json()},
                    {"experts_per_token", m.moe ? Json(m.moe->experts_per_token) : Json()},
                    {"default_dtype", m.default_precision.to_string()},
                    {"config", entry.reconstructed ? "reconstructed" : "published"}});
  }
  return list;
}

Json Session::gpus() const {
  Json list = Json::array();
  for (const auto& gpu : GpuCatalog::bundled().gpus()) {
    Json peaks = Json::object();
    for (const auto& [dtype, ops] : gpu.dense_peak_ops_per_s) peaks[std::string(dtype_name(dtype))] = ops;
    const Link& link = gpu.gpu_link ? *gpu.gpu_link : gpu.host_link;
    list.push_back({{"id", gpu.id},
                    {"name", gpu.name},
                    {"vendor", gpu.vendor},
                    {"architecture", gpu.architecture},
                    {"dense_peak_ops_per_s", peaks},
                    {"memory_bytes", gpu.memory_bytes},
                    {"memory_bandwidth_bytes_per_s", gpu.memory_bandwidth_bytes_per_s},
                    {"tdp_w", gpu.tdp_w},
                    {"idle_w", gpu.idle_w},
                    {"min_power_limit_w", gpu.min_power_limit_w ? Json(*gpu.min_power_limit_w) : Json()},
                    {"link", link.kind},
                    {"link_bytes_per_s_per_direction", link.bandwidth_bytes_per_s},
                    {"source", gpu.source}});
  }
  return list;
}

// Each node's wall power idle and with every GPU at its TDP (the host power model), and what it rests on.
Json Session::nodes() const {
  Json list = Json::array();
  for (const Node& n : NodeCatalog::bundled().nodes()) {
    const bool is_default = NodeCatalog::bundled().default_for(n.gpu) == &n;
    list.push_back({{"id", n.id},
                    {"name", n.name},
                    {"gpu", n.gpu},
                    {"gpus", n.gpus},
                    {"host_idle_dc_w", host_dc_w(n, n.gpu_idle_w, false)},
                    {"wall_idle_w", node_wall_w(n, n.gpu_idle_w, false)},
                    {"wall_at_gpu_tdp_w", node_wall_w(n, n.gpu_tdp_w, true)},
                    {"design_power_w", n.design_power_w},
                    {"psu_standard", n.psu_standard},
                    {"psu_assumed", n.psu_assumed},
                    {"default_for_gpu", is_default},
                    {"source", n.source}});
  }
  return list;
}

Json Session::regions() const {
  const RegionCatalog& catalog = RegionCatalog::bundled();
  Json regions = Json::array(), pue = Json::array();
  for (const Region& r : catalog.regions())
    regions.push_back({{"id", r.id},
                       {"kind", r.kind},
                       {"provider", r.provider},
                       {"name", r.name},
                       {"ci_g_per_kwh", r.ci_g_per_kwh},
                       {"year", r.year},
                       {"source", r.source}});
  for (const PueEntry& p : catalog.pue_entries())
    pue.push_back({{"id", p.id}, {"pue", p.pue}, {"year", p.year}, {"source", p.source}});
  return {{"regions", regions}, {"pue", pue}};
}

namespace {

// One checksum over the bundled files every answer rests on (catalogs, simulator parameters, error bands).
std::string data_checksum() {
  Fnv1a64 hash;
  std::vector<std::filesystem::path> files;
  for (const char* dir : {"models", "gpus", "nodes", "carbon", "engines", "sim"})
    if (std::filesystem::is_directory(data_dir() / dir))
      for (const auto& e : std::filesystem::recursive_directory_iterator(data_dir() / dir))
        if (e.is_regular_file()) files.push_back(e.path());
  files.push_back(default_error_bands_path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    if (!std::filesystem::exists(file)) continue;
    const FileDigest d = digest_file(file);
    hash.update(std::filesystem::relative(file, data_dir()).string());
    hash.update(checksum_hex(d.fnv1a64));
  }
  return checksum_hex(hash.value());
}

}  // namespace

Json Session::versions() const {
  std::call_once(impl_->versions_once, [&] {
    Json predictors = Json::object();
    if (!impl_->settings.model_file.empty()) {
      predictors["model_file"] = checksum_hex(digest_file(impl_->settings.model_file).fnv1a64);
    } else {
      for (const auto& name : predictor_names()) {
        const auto file = data_dir() / "predictors" / (name + ".model");
        if (std::filesystem::exists(file)) predictors[name] = checksum_hex(digest_file(file).fnv1a64);
      }
    }
    impl_->versions = {
        {"llmco2", LLMCO2_VERSION}, {"data", data_checksum()}, {"predictors", predictors}, {"checksum", "FNV-1a 64"}};
  });
  return impl_->versions;
}

}  // namespace llmco2::api
