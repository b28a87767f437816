// A fake runner for the harness tests: it speaks the runner protocol (docs/measure.md) and, instead of running a
// model, advances the fake NVML state (FAKE_NVML_STATE) as a GPU drawing FAKE_RUNNER_POWER_W on each of its
// FAKE_NVML_DEVICES would over the run's simulated time:
//   time = FAKE_RUNNER_PREFILL_S_PER_TOKEN x batch x prompt + FAKE_RUNNER_DECODE_S_PER_STEP x (gen - 1),
// times 1 - jitter on even and 1 + jitter on odd runs of the same shape (FAKE_RUNNER_JITTER). With
// FAKE_RUNNER_SLEEP=1 it really sleeps that long at that power (for the power-sampling path). Failures on demand:
// FAKE_RUNNER_CRASH_ONCE_ON_RUN=N exits on its N-th 'go' (once per state file), FAKE_RUNNER_OOM_PROMPT=P answers an
// out-of-memory error for prompts of P tokens or more, FAKE_RUNNER_KILL_PARENT_ON_RUN=N kills the harness (SIGKILL)
// on its N-th 'go'. Every 'go' is appended to FAKE_NVML_STATE.runs.
#include <unistd.h>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

double env_double(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v ? std::atof(v) : fallback;
}

std::string state_path() {
  const char* v = std::getenv("FAKE_NVML_STATE");
  return v ? v : "";
}

struct Device {
  unsigned long long energy_mj = 0;
  unsigned power_mw = 60000;
};

std::vector<Device> read_devices() {
  std::vector<Device> devices(static_cast<size_t>(env_double("FAKE_NVML_DEVICES", 1)));
  std::ifstream in(state_path());
  for (auto& d : devices)
    if (!(in >> d.energy_mj >> d.power_mw)) break;
  return devices;
}

void write_devices(const std::vector<Device>& devices) {
  const std::string tmp = state_path() + ".tmp";
  {
    std::ofstream out(tmp);
    for (const auto& d : devices) out << d.energy_mj << " " << d.power_mw << "\n";
  }
  std::rename(tmp.c_str(), state_path().c_str());
}

void say(const nlohmann::json& j) { std::cout << j.dump() << std::endl; }

}  // namespace

int main() {
  say({{"event", "hello"}, {"engine", "hf-transformers"}, {"versions", {{"fake", "1"}}}});
  const double power_w = env_double("FAKE_RUNNER_POWER_W", 400), jitter = env_double("FAKE_RUNNER_JITTER", 0);
  std::map<std::string, int> shape_runs;
  int goes = 0;
  nlohmann::json pending;
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto m = nlohmann::json::parse(line);
    const std::string op = m.value("op", "");
    if (op == "quit") return 0;
    if (op == "load") {
      say({{"event", "loaded"}, {"parallelism", m.value("gpus", 1) > 1 ? "layer_split" : "tensor"}, {"load_s", 0.1}});
    } else if (op == "prepare") {
      if (m.value("prompt", 0.0) >= env_double("FAKE_RUNNER_OOM_PROMPT", 1e18)) {
        say({{"event", "error"}, {"kind", "oom"}, {"message", "CUDA out of memory (fake)"}});
        continue;
      }
      pending = m;
      say({{"event", "ready"}, {"id", m["id"]}});
    } else if (op == "go") {
      ++goes;
      std::ofstream(state_path() + ".runs", std::ios::app) << pending.dump() << "\n";
      if (goes == static_cast<int>(env_double("FAKE_RUNNER_KILL_PARENT_ON_RUN", -1))) kill(getppid(), SIGKILL);
      const std::string marker = state_path() + ".crashed";
      if (goes == static_cast<int>(env_double("FAKE_RUNNER_CRASH_ONCE_ON_RUN", -1)) && !std::ifstream(marker)) {
        std::ofstream(marker) << "crashed\n";
        std::_Exit(3);
      }
      const long batch = pending["batch"], prompt = pending["prompt"], gen = pending["gen"];
      const double tokens = static_cast<double>(batch * prompt), steps = static_cast<double>(gen - 1);
      const int k = shape_runs[std::to_string(batch) + "/" + std::to_string(prompt) + "/" + std::to_string(gen)]++;
      const double factor = k % 2 == 0 ? 1 - jitter : 1 + jitter;
      const double seconds = factor * (env_double("FAKE_RUNNER_PREFILL_S_PER_TOKEN", 1e-4) * tokens +
                                       env_double("FAKE_RUNNER_DECODE_S_PER_STEP", 0.01) * steps);
      auto devices = read_devices();
      if (env_double("FAKE_RUNNER_SLEEP", 0) > 0) {
        for (auto& d : devices) d.power_mw = static_cast<unsigned>(power_w * 1000);
        write_devices(devices);
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
        for (auto& d : devices) d.power_mw = 60000;
        write_devices(devices);
      } else {
        for (auto& d : devices) d.energy_mj += static_cast<unsigned long long>(power_w * seconds * 1000 + 0.5);
        write_devices(devices);
      }
      say({{"event", "done"}, {"id", m["id"]}, {"elapsed_s", seconds}, {"prompt_tokens", prompt}, {"gen_tokens", gen}});
    }
  }
  return 0;
}
