// measure/energy_meter.cc - counters, or power sampling and integration.
#include "measure/energy_meter.h"

namespace llmco2::measure {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

EnergyMeter::EnergyMeter(const Nvml& nvml, std::vector<int> devices, std::chrono::milliseconds interval)
    : nvml_(nvml), devices_(std::move(devices)), interval_(interval) {
  for (int d : devices_)
    if (!nvml_.energy_j(d)) counters_ = false;
}

EnergyMeter::~EnergyMeter() {
  running_ = false;
  if (sampler_.joinable()) sampler_.join();
}

double EnergyMeter::counter_sum_j() const {
  double sum = 0;
  for (int d : devices_) sum += nvml_.energy_j(d).value_or(0);
  return sum;
}

double EnergyMeter::power_sum_w() const {
  double sum = 0;
  for (int d : devices_) sum += nvml_.power_w(d);
  return sum;
}

void EnergyMeter::start() {
  if (counters_) {
    start_j_ = counter_sum_j();
    return;
  }
  integrated_j_ = 0;
  running_ = true;
  sampler_ = std::thread([this] { sample_loop(); });
}

void EnergyMeter::sample_loop() {
  auto last_time = Clock::now();
  double last_w = power_sum_w();
  while (running_) {
    std::this_thread::sleep_for(interval_);
    const auto now = Clock::now();
    const double w = power_sum_w();
    integrated_j_ += 0.5 * (last_w + w) * seconds_between(last_time, now);
    last_time = now;
    last_w = w;
  }
  const auto now = Clock::now();  // the part of an interval between the last sample and stop()
  const double w = power_sum_w();
  integrated_j_ += 0.5 * (last_w + w) * seconds_between(last_time, now);
}

double EnergyMeter::stop_j() {
  if (counters_) return counter_sum_j() - start_j_;
  running_ = false;
  if (sampler_.joinable()) sampler_.join();
  return integrated_j_;
}

std::vector<double> idle_power_w(const Nvml& nvml, const std::vector<int>& devices, double seconds) {
  std::vector<double> sum(devices.size(), 0.0);
  long samples = 0;
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  do {
    for (size_t i = 0; i < devices.size(); ++i) sum[i] += nvml.power_w(devices[i]);
    ++samples;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (Clock::now() < end);
  for (double& s : sum) s /= static_cast<double>(samples);
  return sum;
}

}  // namespace llmco2::measure
