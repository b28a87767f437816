// A fake libnvidia-ml.so.1 for the harness tests (no GPU here, and Debian main ships no NVML stub). It exports the C
// functions the harness loads. Its state lives in the file named by FAKE_NVML_STATE, two numbers per line and one line
// per device: the energy counter in mJ and the current power in mW, which the fake runner advances. Other settings:
// FAKE_NVML_DEVICES (default 1), FAKE_NVML_NAME (default "NVIDIA H100 80GB HBM3"), FAKE_NVML_NO_ENERGY=1 (a GPU
// without an energy counter, as before Volta), FAKE_NVML_FAIL_INIT=1.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kDriverNotLoaded = 9;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

struct DeviceState {
  unsigned long long energy_mj = 0;
  unsigned power_mw = 60000;
};

std::vector<DeviceState> read_state() {
  std::vector<DeviceState> devices(static_cast<size_t>(env_int("FAKE_NVML_DEVICES", 1)));
  if (const char* path = std::getenv("FAKE_NVML_STATE")) {
    std::ifstream in(path);
    for (auto& d : devices)
      if (!(in >> d.energy_mj >> d.power_mw)) break;
  }
  return devices;
}

long index_of(void* device) { return reinterpret_cast<long>(device) - 1; }

}  // namespace

extern "C" {

int nvmlInit_v2() { return env_int("FAKE_NVML_FAIL_INIT", 0) ? kDriverNotLoaded : kSuccess; }
int nvmlShutdown() { return kSuccess; }
const char* nvmlErrorString(int status) { return status == kNotSupported ? "Not Supported" : "fake NVML error"; }

int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = static_cast<unsigned>(env_int("FAKE_NVML_DEVICES", 1));
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (index >= static_cast<unsigned>(env_int("FAKE_NVML_DEVICES", 1))) return kInvalidArgument;
  *device = reinterpret_cast<void*>(static_cast<long>(index) + 1);
  return kSuccess;
}

int nvmlDeviceGetName(void*, char* name, unsigned length) {
  const char* v = std::getenv("FAKE_NVML_NAME");
  std::snprintf(name, length, "%s", v ? v : "NVIDIA H100 80GB HBM3");
  return kSuccess;
}

int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* energy_mj) {
  if (env_int("FAKE_NVML_NO_ENERGY", 0)) return kNotSupported;
  *energy_mj = read_state()[static_cast<size_t>(index_of(device))].energy_mj;
  return kSuccess;
}

int nvmlDeviceGetPowerUsage(void* device, unsigned* power_mw) {
  *power_mw = read_state()[static_cast<size_t>(index_of(device))].power_mw;
  return kSuccess;
}

int nvmlDeviceGetEnforcedPowerLimit(void*, unsigned* limit_mw) {
  *limit_mw = 700000;
  return kSuccess;
}

int nvmlDeviceGetMaxClockInfo(void*, int type, unsigned* mhz) {
  *mhz = type == 1 ? 1980 : 2619;
  return kSuccess;
}

int nvmlSystemGetDriverVersion(char* version, unsigned length) {
  std::snprintf(version, length, "%s", "999.99-fake");
  return kSuccess;
}

}  // extern "C"
