// measure/nvml.cc - NVML through dlopen: the declarations of the functions used, as documented by NVIDIA.
#include "measure/nvml.h"

#include <dlfcn.h>

#include "core/dynamic_loading.h"
#include "core/error.h"

namespace llmco2::measure {
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr int kClockSm = 1, kClockMem = 2;  // nvmlClockType_t: NVML_CLOCK_SM, NVML_CLOCK_MEM
constexpr unsigned kNameLength = 96;        // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kVersionLength = 80;     // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

template <typename F>
F symbol(void* library, const char* name) {
  void* address = dlsym(library, name);
  if (!address) fail("NVML library lacks {} (driver too old?)", name);
  return reinterpret_cast<F>(address);
}

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*device_count)(unsigned*);
  nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*);  // mJ since the driver loaded
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*);             // mW
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*);             // enforced limit, mW
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*);          // MHz
  nvmlReturn_t (*driver_version)(char*, unsigned);
};

Nvml::Nvml(const std::string& library) {
  if (!can_dlopen())
    fail("cannot load NVML ({}): this program is linked statically; llmco2-dynamic, beside llmco2, runs measure",
         library);
  library_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_)
    fail("cannot load NVML ({}): {}; an NVIDIA driver is needed to measure (none on this machine?)", library,
         dlerror());
  try {
    load_api();
    check(api_->init(), "nvmlInit_v2");
  } catch (...) {  // the destructor does not run for a constructor that throws
    api_.reset();
    dlclose(library_);
    throw;
  }
}

void Nvml::load_api() {
  api_ = std::make_unique<Api>(Api{symbol<decltype(Api::init)>(library_, "nvmlInit_v2"),
                                   symbol<decltype(Api::shutdown)>(library_, "nvmlShutdown"),
                                   symbol<decltype(Api::error_string)>(library_, "nvmlErrorString"),
                                   symbol<decltype(Api::device_count)>(library_, "nvmlDeviceGetCount_v2"),
                                   symbol<decltype(Api::handle_by_index)>(library_, "nvmlDeviceGetHandleByIndex_v2"),
                                   symbol<decltype(Api::name)>(library_, "nvmlDeviceGetName"),
                                   symbol<decltype(Api::total_energy)>(library_, "nvmlDeviceGetTotalEnergyConsumption"),
                                   symbol<decltype(Api::power_usage)>(library_, "nvmlDeviceGetPowerUsage"),
                                   symbol<decltype(Api::power_limit)>(library_, "nvmlDeviceGetEnforcedPowerLimit"),
                                   symbol<decltype(Api::max_clock)>(library_, "nvmlDeviceGetMaxClockInfo"),
                                   symbol<decltype(Api::driver_version)>(library_, "nvmlSystemGetDriverVersion")});
}

Nvml::~Nvml() {
  api_->shutdown();
  api_.reset();
  dlclose(library_);
}

void Nvml::check(int status, const char* call) const {
  if (status != kSuccess) fail("NVML {} failed: {} (code {})", call, api_->error_string(status), status);
}

void* Nvml::handle(int index) const {
  nvmlDevice_t device = nullptr;
  const int status = api_->handle_by_index(static_cast<unsigned>(index), &device);
  if (status != kSuccess)
    fail("NVML has no GPU {} ({}; this machine has {})", index, api_->error_string(status), device_count());
  return device;
}

int Nvml::device_count() const {
  unsigned count = 0;
  check(api_->device_count(&count), "nvmlDeviceGetCount_v2");
  return static_cast<int>(count);
}

NvmlDeviceInfo Nvml::device_info(int index) const {
  void* device = handle(index);
  NvmlDeviceInfo info;
  info.index = index;
  char name[kNameLength] = {};
  check(api_->name(device, name, kNameLength), "nvmlDeviceGetName");
  info.name = name;
  unsigned value = 0;
  if (api_->power_limit(device, &value) == kSuccess) info.power_limit_w = value / 1000.0;
  if (api_->max_clock(device, kClockSm, &value) == kSuccess) info.sm_clock_max_mhz = value;
  if (api_->max_clock(device, kClockMem, &value) == kSuccess) info.memory_clock_max_mhz = value;
  unsigned long long energy = 0;
  info.has_energy_counter = api_->total_energy(device, &energy) == kSuccess;
  return info;
}

std::string Nvml::driver_version() const {
  char version[kVersionLength] = {};
  check(api_->driver_version(version, kVersionLength), "nvmlSystemGetDriverVersion");
  return version;
}

std::optional<double> Nvml::energy_j(int index) const {
  unsigned long long mj = 0;
  if (api_->total_energy(handle(index), &mj) != kSuccess) return std::nullopt;
  return static_cast<double>(mj) / 1000.0;
}

double Nvml::power_w(int index) const {
  unsigned mw = 0;
  check(api_->power_usage(handle(index), &mw), "nvmlDeviceGetPowerUsage");
  return mw / 1000.0;
}

}  // namespace llmco2::measure
