// measure/nvml.h - the few NVML calls the measurement harness needs, loaded at run time with dlopen (Debian main has
// no NVML headers or stub library): device names, energy counters (Volta and later) or power, clocks, power limits,
// the driver version.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "measure/module.h"

namespace llmco2::measure {

struct NvmlDeviceInfo {
  int index = 0;
  std::string name;  // as nvidia-smi prints it, e.g. "NVIDIA H100 80GB HBM3"
  std::optional<double> power_limit_w;
  std::optional<unsigned> sm_clock_max_mhz, memory_clock_max_mhz;
  bool has_energy_counter = false;
};

class Nvml {
 public:
  // Loads `library` (default libnvidia-ml.so.1) and initialises NVML. Throws Error saying why it cannot.
  explicit Nvml(const std::string& library = "libnvidia-ml.so.1");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  int device_count() const;
  NvmlDeviceInfo device_info(int index) const;
  std::string driver_version() const;
  // The device's cumulative energy counter in J, or nullopt when it has none (before Volta).
  std::optional<double> energy_j(int index) const;
  double power_w(int index) const;  // current power draw

 private:
  struct Api;
  void load_api();
  void* handle(int index) const;
  void check(int status, const char* call) const;
  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
};

}  // namespace llmco2::measure
