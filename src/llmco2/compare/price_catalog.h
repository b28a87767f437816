// compare/price_catalog.h - cloud on-demand list prices of GPU instances (data/prices/cloud_on_demand.csv), each with
// its instance, region, date and source, for the capacity planner's dollars.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "compare/module.h"

namespace llmco2::compare {

struct GpuPrice {
  std::string gpu, cloud, region, instance;
  int gpus = 1;  // GPUs of the instance
  double usd_per_instance_hour = 0;
  std::string date;  // YYYY-MM-DD the price was seen
  std::string source;
  double usd_per_gpu_hour() const { return usd_per_instance_hour / gpus; }
};

class PriceCatalog {
 public:
  // Every row of a prices CSV (gpu, cloud, region, instance, gpus, usd_per_instance_hour, date, source), each cell
  // checked: throws Error naming the file, line and column.
  static PriceCatalog load(const std::filesystem::path& csv);
  static const PriceCatalog& bundled();  // data_dir()/prices/cloud_on_demand.csv, loaded once

  const std::vector<GpuPrice>& prices() const { return prices_; }
  // The price of `gpu_id` on `cloud`, or nullptr.
  const GpuPrice* find(const std::string& cloud, const std::string& gpu_id) const;
  // Throws Error "--cloud-prices: expected one of ..." when `cloud` has no row at all.
  void require_cloud(const std::string& cloud) const;
  std::vector<std::string> clouds() const;  // sorted, each once

 private:
  std::vector<GpuPrice> prices_;
};

}  // namespace llmco2::compare
