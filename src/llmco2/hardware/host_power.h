// hardware/host_power.h - what a node draws at the wall while its GPUs draw a given power: CPUs, memory, NICs,
// switches, drives and fans (the host, DC side), then the power supplies' conversion loss; and the energy scope
// (GPU or node) every figure of llmco2 is reported in.
#pragma once

#include <optional>
#include <string>

#include "hardware/module.h"
#include "hardware/node.h"

namespace llmco2::hardware {

// Engine processes keep CPU cores busy while they serve: vLLM and TensorRT-LLM run one worker process per GPU that
// polls its GPU and schedules the next step (plus tokenisation), about one core each. Range: 1-2 cores per GPU.
inline constexpr double kBusyCoresPerGpu = 1.0;

// DC power of the host (everything but the GPUs) when each GPU draws `gpu_w`; `serving`: the engine is running steps
// (CPU cores busy, memory active), else the node idles.
double host_dc_w(const Node& node, double gpu_w, bool serving);

// Fan power when the node dissipates `heat_w` (DC): fan speed follows the heat to remove relative to the node's
// maximum, and fan power goes as speed cubed (fan affinity laws), never below the floor speed's power.
double fans_w(const Node& node, double heat_w);

// AC->DC efficiency of the node's supplies at `dc_w` output (interpolated on the supply's curve, clamped at its ends).
double psu_efficiency(const Node& node, double dc_w);

// Wall (AC) power of the whole node when each of its GPUs draws `gpu_w`.
double node_wall_w(const Node& node, double gpu_w, bool serving);

// Which energy a figure counts: the GPUs' alone (what NVML reads) or the whole node's at the wall, apportioned to
// the GPUs a request uses (the node's power x GPUs used / GPUs in the node, as if the node's other GPUs ran alike).
struct EnergyScope {
  std::optional<Node> node;  // unset: GPU scope
  std::string fallback;      // why GPU scope was used although node scope was asked for ("" otherwise)

  bool is_node() const { return node.has_value(); }
  std::string name() const { return is_node() ? "node" : "gpu"; }
  // "node (dgx-h100: NVIDIA DGX H100, wall power incl. host and power supplies)" or "gpu (NVML board power)".
  std::string label() const;
  // Power per GPU this scope meters when each GPU draws `gpu_w`.
  double metered_w(double gpu_w, bool serving) const;
  // Energy this scope meters for `gpu_energy_j` drawn by `gpus` GPUs over `time_s`.
  double metered_j(double gpu_energy_j, double time_s, int gpus) const;
};

}  // namespace llmco2::hardware
