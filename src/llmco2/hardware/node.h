// hardware/node.h - a server node around its GPUs (CPUs, memory, NICs, switches, fans, power supplies), read from
// data/nodes/*.json, and the host power model that turns GPU power into the power the node draws at the wall.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json_io.h"
#include "hardware/module.h"

namespace llmco2::hardware {

struct Node {
  std::string id, name, source;
  std::string gpu;  // GPU catalog id of its accelerators
  int gpus = 0;     // accelerators per node
  std::string cooling;

  std::string cpu_model;
  int cpu_sockets = 0, cpu_cores_per_socket = 0;
  double cpu_tdp_w = 0, cpu_idle_w = 0;  // per socket

  int dimms = 0;
  double dimm_idle_w = 0, dimm_active_w = 0;  // per DIMM

  double nics_w = 0;        // every NIC and DPU at its typical power
  double gpu_fabric_w = 0;  // NVSwitch chips / PCIe switches of the GPU baseboard
  double storage_w = 0, baseboard_w = 0;
  double fans_idle_w = 0, fans_max_w = 0;  // all fans at their floor speed and at full speed

  // Power supplies: the active supplies' combined DC rating and their efficiency curve (load fraction of that rating,
  // AC->DC efficiency). A file without supply data gets kAssumedPsu: psu_assumed says so.
  double psu_capacity_w = 0;
  std::string psu_standard;
  std::vector<std::pair<double, double>> psu_efficiency;
  bool psu_assumed = false;

  std::optional<double> vendor_max_power_w;  // the vendor's maximum system power, when published
  // The heat the fans are sized for: the vendor's maximum, else the sum of the parts' maxima (GPUs at TDP, CPUs at
  // TDP, DIMMs active, NICs, switches, drives, board, fans at full speed).
  double design_power_w = 0;
  double gpu_tdp_w = 0, gpu_idle_w = 0;   // of its GPU type (GPU catalog)
  std::optional<double> measured_idle_w;  // a published wall reading of the idle node
  bool default_for_gpu = false;           // the node llmco2 assumes for its GPU type when none is named
  // The network between nodes (InfiniBand, RoCE, EFA): its kind and bandwidth per GPU and direction (the node's NIC
  // ports over its GPUs); empty and 0 when the file does not say.
  std::string scale_out_kind;
  double scale_out_bytes_per_s_per_gpu = 0;
  std::vector<std::string> notes;
};

// Reads one node file. Every value is range-checked and must name its source; throws Error with one line naming the
// file and key.
Node node_from_json(const Json& json, const std::string& source);
Node read_node_file(const std::filesystem::path& path);  // node_from_json of a file

class NodeCatalog {
 public:
  static NodeCatalog load(const std::filesystem::path& dir);  // every *.json in dir, sorted by id
  static const NodeCatalog& bundled();                        // data_dir()/nodes, loaded once

  const std::vector<Node>& nodes() const { return nodes_; }
  // An id or a JSON path; unknown names throw Error suggesting the nearest ids.
  Node resolve(const std::string& name) const;
  // The node assumed for a GPU type: the one marked default_for_gpu, else the first by id holding that GPU;
  // nullptr when no node holds it.
  const Node* default_for(const std::string& gpu_id) const;

  // What bundled().resolve(name) and bundled().default_for(gpu_id) give, reading only that node's file when the
  // catalog index (hardware/catalog_index.h) applies, else the whole catalog. Thread-safe; each file is read once.
  static Node resolve_bundled(const std::string& name);
  static std::optional<Node> bundled_default_for(const std::string& gpu_id);

 private:
  std::vector<Node> nodes_;
};

}  // namespace llmco2::hardware
