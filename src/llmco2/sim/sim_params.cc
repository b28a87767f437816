// sim/sim_params.cc - simulator parameters to and from JSON.
#include "sim/sim_params.h"

#include "core/error.h"
#include "core/paths.h"

namespace llmco2 {

EngineParams SimParams::engine(const std::string& name) const {
  auto it = engines.find(name);
  if (it == engines.end()) return default_engine;
  return {default_engine.step_overhead_s * it->second.step_scale,
          default_engine.launch_overhead_s * it->second.launch_scale};
}

GpuAdjust SimParams::gpu(const std::string& id) const {
  auto it = gpus.find(id);
  return it == gpus.end() ? GpuAdjust{} : it->second;
}

namespace {

// The shared scalar parameters by name, so JSON reading and writing use one list.
std::vector<std::pair<const char*, double SimParams::*>> scalar_fields() {
  return {{"matrix_efficiency", &SimParams::matrix_efficiency},
          {"matrix_half_rows", &SimParams::matrix_half_rows},
          {"attention_efficiency", &SimParams::attention_efficiency},
          {"vector_efficiency", &SimParams::vector_efficiency},
          {"memory_efficiency", &SimParams::memory_efficiency},
          {"memory_half_bytes", &SimParams::memory_half_bytes},
          {"kernel_gap_s", &SimParams::kernel_gap_s},
          {"network_efficiency", &SimParams::network_efficiency},
          {"allreduce_hop_s", &SimParams::allreduce_hop_s},
          {"sync_wait_fraction", &SimParams::sync_wait_fraction},
          {"power_active", &SimParams::power_active},
          {"power_compute", &SimParams::power_compute},
          {"power_memory", &SimParams::power_memory},
          {"energy_noise", &SimParams::energy_noise},
          {"latency_noise", &SimParams::latency_noise}};
}

Json engine_to_json(const EngineParams& e) {
  return {{"step_overhead_s", e.step_overhead_s}, {"launch_overhead_s", e.launch_overhead_s}};
}
EngineParams engine_from_json(const Json& j, const std::string& source) {
  JsonReader r(j, source);
  return {r.number("step_overhead_s"), r.number("launch_overhead_s")};
}

}  // namespace

Json sim_params_to_json(const SimParams& p) {
  Json j;
  for (auto [name, field] : scalar_fields()) j["shared"][name] = p.*field;
  j["default_engine"] = engine_to_json(p.default_engine);
  j["engines"] = Json::object();
  for (const auto& [name, e] : p.engines) j["engines"][name] = {{"step_scale", e.step_scale}, {"launch_scale", e.launch_scale}};
  j["gpus"] = Json::object();
  for (const auto& [id, g] : p.gpus)
    j["gpus"][id] = {{"compute_scale", g.compute_scale}, {"memory_scale", g.memory_scale},
                     {"power_scale", g.power_scale}};
  return j;
}

SimParams sim_params_from_json(const Json& j, const std::string& source) {
  SimParams p;
  JsonReader top(j, source);
  JsonReader shared(top.at("shared"), source + ": shared");
  for (auto [name, field] : scalar_fields()) p.*field = shared.number(name);
  p.default_engine = engine_from_json(top.at("default_engine"), source + ": default_engine");
  for (const auto& [name, e] : top.at("engines").items()) {
    JsonReader r(e, source + ": engines." + name);
    p.engines[name] = {r.number("step_scale"), r.number("launch_scale")};
  }
  for (const auto& [id, g] : top.at("gpus").items()) {
    JsonReader r(g, source + ": gpus." + id);
    p.gpus[id] = {r.number("compute_scale"), r.number("memory_scale"), r.number("power_scale")};
  }
  return p;
}

std::filesystem::path default_sim_params_path() { return data_dir() / "sim" / "params.json"; }

SimParams load_sim_params(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) return SimParams{};
  return sim_params_from_json(read_json_file(path), path.string());
}

}  // namespace llmco2
