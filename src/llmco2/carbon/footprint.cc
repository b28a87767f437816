// carbon/footprint.cc - operational and embodied carbon per phase, and their intervals.
#include "carbon/footprint.h"

namespace llmco2::carbon {
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
    if (const auto v = values.*p.value) {
      const BandSpan span = band_span(band, *v);
      out.*p.interval = Interval{span.low, span.high};
    }
  return out;
}

PhaseIntervals sum(const PhaseIntervals& a, const PhaseIntervals& b) {
  PhaseIntervals out;
  for (const auto& p : kPhaseMembers)
    if (a.*p.interval && b.*p.interval)
      out.*p.interval =
          Interval{(a.*p.interval)->low + (b.*p.interval)->low, (a.*p.interval)->high + (b.*p.interval)->high};
  return out;
}

PhaseValues sum(const PhaseValues& a, const PhaseValues& b) {
  PhaseValues out;
  for (const auto& p : kPhaseMembers)
    if (a.*p.value && b.*p.value) out.*p.value = *(a.*p.value) + *(b.*p.value);
  return out;
}

}  // namespace

PhaseValues scoped_energy_j(const Prediction& prediction, const EnergyScope& scope, int gpus) {
  const PhaseValues& e = prediction.energy_j;
  const PhaseValues& t = prediction.latency_s;
  if (!scope.is_node()) return e;
  // A phase without a latency takes the total's ratio of metered to GPU energy.
  const double total_ratio =
      e.total && t.total && *e.total > 0 ? scope.metered_j(*e.total, *t.total, gpus) / *e.total : 1.0;
  PhaseValues out;
  for (const auto& p : kPhaseMembers) {
    if (!(e.*p.value)) continue;
    const double energy_j = *(e.*p.value);
    out.*p.value = t.*p.value ? scope.metered_j(energy_j, *(t.*p.value), gpus) : energy_j * total_ratio;
  }
  // Energy adds over time: with both phases metered, the total is their sum (not the wall power at the mean).
  if (out.prefill && out.decode) out.total = *out.prefill + *out.decode;
  return out;
}

double operational_g(double energy_j, double pue, double ci_g_per_kwh) {
  return energy_j / kJoulesPerKwh * pue * ci_g_per_kwh;
}

Footprint footprint(const Prediction& prediction, const CarbonInputs& in, const PredictorErrorBands* bands) {
  Footprint f;
  f.energy_scope = in.scope.name();
  f.energy_j = scoped_energy_j(prediction, in.scope, in.gpus);
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
    f.total_g_interval =
        f.embodied_unknown ? f.operational_g_interval : sum(f.operational_g_interval, f.embodied_g_interval);
  }
  return f;
}

Json quantity_json(const PhaseValues& v, double scale) {
  const auto scaled = [scale](const std::optional<double>& x) { return x ? Json(*x * scale) : Json(); };
  return {{"prefill", scaled(v.prefill)}, {"decode", scaled(v.decode)}, {"total", scaled(v.total_or_sum())}};
}

Json total_json(double total) { return quantity_json(PhaseValues{std::nullopt, std::nullopt, total}); }

}  // namespace llmco2::carbon
