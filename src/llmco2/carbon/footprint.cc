// carbon/footprint.cc - operational and embodied carbon per phase, and their intervals.
#include "carbon/footprint.h"

namespace llmco2 {
namespace {

constexpr double kJoulesPerKwh = 3.6e6;

// Applies f to each phase value that is set.
template <typename F>
PhaseValues map_phases(const PhaseValues& in, F f) {
  PhaseValues out;
  for (const auto& p : kPhaseMembers)
    if (in.*p.value) out.*p.value = f(*(in.*p.value));
  return out;
}

PhaseIntervals scaled(const PhaseValues& values, const ErrorBand& band) {
  PhaseIntervals out;
  for (const auto& p : kPhaseMembers)
    if (values.*p.value) out.*p.interval = Interval{*(values.*p.value) / band.factor, *(values.*p.value) * band.factor};
  return out;
}

PhaseIntervals sum(const PhaseIntervals& a, const PhaseIntervals& b) {
  PhaseIntervals out;
  for (const auto& p : kPhaseMembers)
    if (a.*p.interval && b.*p.interval)
      out.*p.interval = Interval{(a.*p.interval)->low + (b.*p.interval)->low, (a.*p.interval)->high + (b.*p.interval)->high};
  return out;
}

PhaseValues sum(const PhaseValues& a, const PhaseValues& b) {
  PhaseValues out;
  for (const auto& p : kPhaseMembers)
    if (a.*p.value && b.*p.value) out.*p.value = *(a.*p.value) + *(b.*p.value);
  return out;
}

}  // namespace

double operational_g(double energy_j, double pue, double ci_g_per_kwh) {
  return energy_j / kJoulesPerKwh * pue * ci_g_per_kwh;
}

Footprint footprint(const Prediction& prediction, const CarbonInputs& in, const PredictorErrorBands* bands) {
  Footprint f;
  f.energy_j = prediction.energy_j;
  f.latency_s = prediction.latency_s;
  const auto operational = [&](double energy_j) { return operational_g(energy_j, in.pue, in.ci_g_per_kwh); };
  const auto embodied = [&](double latency_s) {
    return embodied_g(*in.embodied.kgco2e, latency_s, in.lifetime_years, in.gpus);
  };
  f.operational_g = map_phases(f.energy_j, operational);
  if (in.embodied.known()) {
    f.embodied_g = map_phases(f.latency_s, embodied);
    f.total_g = sum(f.operational_g, f.embodied_g);
  } else {
    f.embodied_unknown = in.embodied.unknown_label();
    f.total_g = f.operational_g;  // operational only, said in embodied_unknown
  }
  if (bands && bands->energy && bands->latency) {
    f.has_intervals = true;
    f.energy_j_interval = scaled(f.energy_j, *bands->energy);
    f.latency_s_interval = scaled(f.latency_s, *bands->latency);
    f.operational_g_interval = scaled(f.operational_g, *bands->energy);
    f.embodied_g_interval = scaled(f.embodied_g, *bands->latency);
    // The bounds add: as if the energy and latency errors went the same way (the wider, safer interval).
    f.total_g_interval = f.embodied_unknown ? f.operational_g_interval
                                            : sum(f.operational_g_interval, f.embodied_g_interval);
  }
  return f;
}

}  // namespace llmco2
