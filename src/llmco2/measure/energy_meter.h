// measure/energy_meter.h - the energy a set of GPUs draws over a window: the difference of their cumulative energy
// counters where every GPU has one, else their power sampled on a thread and integrated (trapezoid rule).
#pragma once

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "measure/module.h"
#include "measure/nvml.h"

namespace llmco2::measure {

class EnergyMeter {
 public:
  EnergyMeter(const Nvml& nvml, std::vector<int> devices, std::chrono::milliseconds sample_interval);
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  bool uses_counters() const { return counters_; }
  void start();
  double stop_j();  // J drawn by all the devices since start()

 private:
  double counter_sum_j() const;
  double power_sum_w() const;
  void sample_loop();

  const Nvml& nvml_;
  std::vector<int> devices_;
  std::chrono::milliseconds interval_;
  bool counters_ = true;
  double start_j_ = 0;
  std::atomic<bool> running_{false};
  double integrated_j_ = 0;  // written by the sampler, read after join
  std::thread sampler_;
};

// Mean power of each device over `seconds` of sampling with nothing running (W).
std::vector<double> idle_power_w(const Nvml& nvml, const std::vector<int>& devices, double seconds);

}  // namespace llmco2::measure
