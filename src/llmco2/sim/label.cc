// sim/label.cc - dataset and plan rows to simulator configurations and back.
#include "sim/label.h"

#include <cmath>

#include "core/error.h"
#include "dataset/architecture.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"

namespace llmco2 {

std::shared_ptr<const ModelSpec> CatalogCache::model(const std::string& name) {
  auto& slot = models_[name];
  if (!slot) slot = std::make_shared<const ModelSpec>(ModelCatalog::bundled().resolve(name));
  return slot;
}

std::shared_ptr<const Gpu> CatalogCache::gpu(const std::string& name) {
  auto& slot = gpus_[name];
  if (!slot) slot = std::make_shared<const Gpu>(GpuCatalog::bundled().resolve(name));
  return slot;
}

SimConfig config_for_row(const DatasetRow& row, CatalogCache& catalogs) {
  SimConfig c;
  c.model = catalogs.model(row.model);
  c.gpu = catalogs.gpu(row.gpu);
  const bool layer_split = row.parallelism == Parallelism::layer_split;
  const double replica_batch = row.batch / (layer_split ? 1 : row.data_parallel);
  Request& r = c.request;
  r.batch = std::max(1L, std::lround(replica_batch));
  r.prompt_tokens = std::max(1L, std::lround(row.prompt_tokens));
  r.gen_tokens = std::max(1L, std::lround(row.gen_tokens));
  r.gpus = layer_split ? 1 : row.tensor_parallel;
  r.precision = precision_or_default(row.dtype, c.model->default_dtype);
  r.engine = row.engine;
  validate_request(r, *c.model);
  c.scenario.measures = row.measures;
  c.scenario.parallelism = row.parallelism;
  c.scenario.layer_split_gpus = layer_split ? row.gpus : 1;
  c.scenario.data_parallel = layer_split ? 1 : row.data_parallel;
  c.scenario.kv_cache = !row.has_caveat("no_kv_cache");
  c.batch_scale = replica_batch / static_cast<double>(r.batch);
  return c;
}

SimConfig config_for_plan(const PlanRow& row, CatalogCache& catalogs) {
  SimConfig c;
  c.model = catalogs.model(row.model);
  c.gpu = catalogs.gpu(row.gpu);
  Request& r = c.request;
  r.batch = row.batch;
  r.prompt_tokens = row.prompt;
  r.gen_tokens = row.gen;
  r.gpus = row.gpus;
  r.precision = precision_or_default(row.dtype, c.model->default_dtype);
  if (!row.engine.empty()) r.engine = row.engine;
  validate_request(r, *c.model);
  c.scenario.measures = row.batch > 1 ? Measures::fixed_batch : Measures::isolated;
  return c;
}

PhaseValues simulated_energy(const SimResult& result, const SimConfig& c) {
  return {result.energy_j.prefill * c.batch_scale, result.energy_j.decode * c.batch_scale,
          result.energy_j.total() * c.batch_scale};
}

PhaseValues simulated_latency(const SimResult& result, const SimConfig& c) {
  if (c.scenario.measures == Measures::steady_state) return {std::nullopt, std::nullopt, result.latency_s.total()};
  return {result.latency_s.prefill, result.latency_s.decode, result.latency_s.total()};
}

DatasetRow simulated_row(const SimConfig& c, const SimResult& result, std::string source_ref) {
  DatasetRow row;
  row.source = "sim";
  row.source_ref = std::move(source_ref);
  row.model = c.model->id;
  row.model_source_name = c.model->id;
  row.model_relation = "same";
  row.arch = architecture_fields(*c.model);
  row.dtype = c.request.precision.to_string();
  row.gpu = c.gpu->id;
  row.gpus = c.request.gpus;
  row.tensor_parallel = c.request.gpus;
  if (c.request.gpus > 1) row.interconnect = c.gpu->network_link(c.request.gpus).kind;
  row.engine = c.request.engine;
  row.batch = static_cast<double>(c.request.batch);
  row.prompt_tokens = static_cast<double>(c.request.prompt_tokens);
  row.gen_tokens = static_cast<double>(c.request.gen_tokens);
  row.measures = c.scenario.measures;
  row.energy_j = simulated_energy(result, c);
  row.latency_s = simulated_latency(result, c);
  return row;
}

}  // namespace llmco2
