// hardware/node.cc - node files: every figure range-checked and sourced.
#include "hardware/node.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "core/names.h"
#include "core/paths.h"
#include "core/ranges.h"
#include "hardware/catalog_index.h"
#include "hardware/gpu_catalog.h"

namespace llmco2::hardware {
namespace {

// The plausible range of every number of a node file; outside is a typo, a wrong unit or not one node.
constexpr ParamRange kNodeRanges[] = {
    {"gpus", 1, 72, "accelerators in one node: 1 (a cloud instance's server share) to 72 (an NVL72 rack domain)"},
    {"cpu.sockets", 1, 8, "CPU sockets of one server"},
    {"cpu.cores_per_socket", 1, 512, "cores of one CPU"},
    {"cpu.tdp_w", 10, 1000, "W per socket: server CPUs are 100-500 W"},
    {"cpu.idle_w", 1, 1000, "W per socket at OS idle, below its TDP"},
    {"memory.dimms", 0, 64, "DIMMs of one server"},
    {"memory.idle_w_per_dimm", 0, 40, "W per DIMM idle: DDR4/DDR5 RDIMMs draw 1-5 W"},
    {"memory.active_w_per_dimm", 0, 40, "W per DIMM under load: DDR5 RDIMMs draw up to ~10-15 W"},
    {"nics.count", 0, 64, "cards of one model in the node"},
    {"nics.typical_w", 0, 500, "W per NIC or DPU: 10-25 W for a NIC, up to ~150 W for a DPU"},
    {"gpu_fabric_w", 0, 5000, "W for all NVSwitch chips / PCIe switches of the GPU baseboard"},
    {"storage_w", 0, 2000, "W for all drives: NVMe SSDs draw 5-25 W each"},
    {"baseboard_w", 0, 3000, "W: motherboard, BMC, chipset and losses not counted elsewhere"},
    {"fans.idle_w", 0, 10000, "W of all fans at floor speed"},
    {"fans.max_w", 0, 10000, "W of all fans at full speed"},
    {"psu.count", 1, 32, "power supplies of the node"},
    {"psu.active", 1, 32, "supplies sharing the load"},
    {"psu.rated_w", 100, 20000, "W DC output of one supply"},
    {"psu.efficiency.load", 0, 1.5, "load fraction of the active supplies' rating"},
    {"psu.efficiency.value", 0.5, 0.999, "AC->DC efficiency: 80 PLUS levels are 0.80-0.96"},
    {"max_power_w", 50, 200000, "W: the vendor's maximum system power"},
    {"measured_idle_w", 10, 200000, "W at the wall, idle node"},
    {"scale_out.gbps_per_gpu", 1, 3200, "Gb/s of scale-out network per GPU: 25 GbE to 1.6 Tb/s ports"},
};

// Fields that must name their source in "sources".
constexpr std::string_view kNodeSourcedFields[] = {"cpu",         "memory", "nics", "gpu_fabric_w", "storage_w",
                                                   "baseboard_w", "fans",   "psu",  "max_power_w"};

const ParamRange& node_range(std::string_view key) { return range_named(kNodeRanges, key, "node"); }

double ranged(const JsonReader& r, std::string_view key, std::string_view full_key) {
  return check_range(r.number(key), node_range(full_key), r.source(), full_key);
}

JsonReader sub(const JsonReader& r, std::string_view key) {
  return JsonReader(r.at(key), fmt::format("{}: {}", r.source(), key));
}

void read_cpu(const JsonReader& file, Node& n) {
  const JsonReader r = sub(file, "cpu");
  n.cpu_model = r.string("model");
  n.cpu_sockets = static_cast<int>(ranged(r, "sockets", "cpu.sockets"));
  n.cpu_cores_per_socket = static_cast<int>(ranged(r, "cores_per_socket", "cpu.cores_per_socket"));
  n.cpu_tdp_w = ranged(r, "tdp_w", "cpu.tdp_w");
  n.cpu_idle_w = ranged(r, "idle_w", "cpu.idle_w");
  if (n.cpu_idle_w >= n.cpu_tdp_w)
    fail("{}: cpu.idle_w = {} is not below cpu.tdp_w = {}", file.source(), n.cpu_idle_w, n.cpu_tdp_w);
}

void read_memory(const JsonReader& file, Node& n) {
  const JsonReader r = sub(file, "memory");
  n.dimms = static_cast<int>(ranged(r, "dimms", "memory.dimms"));
  n.dimm_idle_w = ranged(r, "idle_w_per_dimm", "memory.idle_w_per_dimm");
  n.dimm_active_w = ranged(r, "active_w_per_dimm", "memory.active_w_per_dimm");
  if (n.dimm_active_w < n.dimm_idle_w)
    fail("{}: memory.active_w_per_dimm = {} is below idle_w_per_dimm = {}", file.source(), n.dimm_active_w,
         n.dimm_idle_w);
}

// The longest list a node file may hold (NIC kinds, supply efficiency points): a few are real, 64 is generous.
constexpr size_t kMaxListEntries = 64;

void read_nics(const JsonReader& file, Node& n) {
  const Json& nics = file.at("nics");
  if (!nics.is_array()) fail("{}: key 'nics' must be a list of {{model, count, typical_w}}", file.source());
  // A node holds a few kinds of card (the DGX B200's file lists 3); a list of thousands is not a node.
  if (nics.size() > kMaxListEntries)
    fail("{}: key 'nics' lists {} kinds of card, more than the {} a node file may hold", file.source(), nics.size(),
         kMaxListEntries);
  for (const Json& nic : nics) {
    const JsonReader r(nic, file.source() + ": nics");
    r.string("model");
    // A card whose count or power is unpublished (null, said in sources) adds nothing.
    if (r.has("count") && r.has("typical_w"))
      n.nics_w += ranged(r, "count", "nics.count") * ranged(r, "typical_w", "nics.typical_w");
  }
}

// Supplies of a node whose file has none: the 80 PLUS Platinum levels (230 V internal redundant: 90/94/91% at
// 20/50/100% load, the lowest grade sold for current GPU servers), held below 20%; and a combined rating of twice the
// node's design power (N+N redundant supplies sharing the load, as the DGX H100's 6 x 3.3 kW for 10.2 kW do).
constexpr double kAssumedPsuCapacityPerDesignW = 2.0;
const std::vector<std::pair<double, double>> kAssumedPsuCurve = {{0.2, 0.90}, {0.5, 0.94}, {1.0, 0.91}};

void read_psu(const JsonReader& file, Node& n) {
  const JsonReader r = sub(file, "psu");
  if (!r.has("efficiency") || !r.has("rated_w") || !r.has("active")) {
    n.psu_assumed = true, n.psu_standard = "assumed 80 PLUS Platinum (no supply data)";
    n.psu_efficiency = kAssumedPsuCurve;
    return;
  }
  const int count = static_cast<int>(ranged(r, "count", "psu.count"));
  const int active = static_cast<int>(ranged(r, "active", "psu.active"));
  if (active > count) fail("{}: psu.active = {} exceeds psu.count = {}", file.source(), active, count);
  n.psu_capacity_w = active * ranged(r, "rated_w", "psu.rated_w");
  n.psu_standard = r.optional_string("standard").value_or("");
  const Json& curve = r.at("efficiency");
  if (curve.is_array() && curve.size() > kMaxListEntries)
    fail("{}: psu.efficiency has {} points, more than the {} a node file may hold", file.source(), curve.size(),
         kMaxListEntries);
  for (const Json& point : curve) {
    if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_number())
      fail("{}: psu.efficiency must list [load fraction, efficiency] pairs", file.source());
    const double load = check_range(point[0].get<double>(), node_range("psu.efficiency.load"), file.source());
    const double eff = check_range(point[1].get<double>(), node_range("psu.efficiency.value"), file.source());
    if (!n.psu_efficiency.empty() && load <= n.psu_efficiency.back().first)
      fail("{}: psu.efficiency loads must increase (found {} after {})", file.source(), load,
           n.psu_efficiency.back().first);
    n.psu_efficiency.emplace_back(load, eff);
  }
  if (n.psu_efficiency.empty()) fail("{}: psu.efficiency has no points", file.source());
}

void read_fans(const JsonReader& file, Node& n) {
  const JsonReader r = sub(file, "fans");
  n.fans_idle_w = ranged(r, "idle_w", "fans.idle_w");
  n.fans_max_w = ranged(r, "max_w", "fans.max_w");
  if (n.fans_max_w < n.fans_idle_w)
    fail("{}: fans.max_w = {} is below fans.idle_w = {}", file.source(), n.fans_max_w, n.fans_idle_w);
}

double host_max_dc_w(const Node& n) {
  return n.cpu_sockets * n.cpu_tdp_w + n.dimms * n.dimm_active_w + n.nics_w + n.gpu_fabric_w + n.storage_w +
         n.baseboard_w + n.fans_max_w;
}

void set_gpu_and_design_power(const JsonReader& r, Node& n) {
  const Gpu gpu = GpuCatalog::resolve_bundled(n.gpu);
  if (gpu.id != n.gpu)
    fail("{}: key 'gpu' must be a GPU catalog id, found '{}' (the id is '{}')", r.source(), n.gpu, gpu.id);
  n.gpu_tdp_w = gpu.tdp_w, n.gpu_idle_w = gpu.idle_w;
  n.design_power_w = n.vendor_max_power_w.value_or(n.gpus * n.gpu_tdp_w + host_max_dc_w(n));
  if (n.psu_assumed) n.psu_capacity_w = kAssumedPsuCapacityPerDesignW * n.design_power_w;
}

void check_sources(const JsonReader& r, const Node& n) {
  const JsonReader sources = sub(r, "sources");
  for (const auto field : kNodeSourcedFields)
    if (!sources.has(field))
      fail("{}: sources has no entry for '{}' (every value names its source)", r.source(), field);
  if (!n.scale_out_kind.empty() && !sources.has("scale_out"))
    fail("{}: sources has no entry for 'scale_out' (every value names its source)", r.source());
  if (n.measured_idle_w && !sources.has("measured_idle_w"))
    fail("{}: sources has no entry for 'measured_idle_w' (every value names its source)", r.source());
}

}  // namespace

Node read_node_file(const std::filesystem::path& path) {
  const Json json = read_json_file(path);
  return with_json_errors(path.string(), [&] { return node_from_json(json, path.string()); });
}

Node node_from_json(const Json& json, const std::string& source) {
  const JsonReader r(json, source);
  Node n;
  n.source = source;
  n.id = r.string("id");
  check_catalog_id(n.id, source);
  n.name = r.string("name");
  n.gpu = r.string("gpu");
  n.gpus = static_cast<int>(ranged(r, "gpus", "gpus"));
  n.cooling = r.optional_string("cooling").value_or("");
  read_cpu(r, n);
  read_memory(r, n);
  read_nics(r, n);
  n.gpu_fabric_w = ranged(r, "gpu_fabric_w", "gpu_fabric_w");
  if (r.has("storage_w")) n.storage_w = ranged(r, "storage_w", "storage_w");  // null: unpublished, said in sources
  n.baseboard_w = ranged(r, "baseboard_w", "baseboard_w");
  read_fans(r, n);
  read_psu(r, n);
  if (r.has("max_power_w")) n.vendor_max_power_w = ranged(r, "max_power_w", "max_power_w");
  set_gpu_and_design_power(r, n);
  if (r.has("measured_idle_w")) n.measured_idle_w = ranged(r, "measured_idle_w", "measured_idle_w");
  n.default_for_gpu = r.optional_bool("default_for_gpu").value_or(false);
  if (r.has("scale_out")) {  // absent: the file does not say which network joins nodes
    const JsonReader net = sub(r, "scale_out");
    n.scale_out_kind = net.string("kind");
    n.scale_out_bytes_per_s_per_gpu = ranged(net, "gbps_per_gpu", "scale_out.gbps_per_gpu") * 1e9 / 8;
  }
  n.notes = r.strings("notes");
  check_sources(r, n);
  return n;
}

NodeCatalog NodeCatalog::load(const std::filesystem::path& dir) {
  NodeCatalog catalog;
  for (const auto& path : json_files_in(dir, "node catalog")) catalog.nodes_.push_back(read_node_file(path));
  std::sort(catalog.nodes_.begin(), catalog.nodes_.end(), [](const Node& a, const Node& b) { return a.id < b.id; });
  return catalog;
}

const NodeCatalog& NodeCatalog::bundled() {
  static const NodeCatalog catalog = load(data_dir() / "nodes");
  return catalog;
}

namespace {

// The node of an index entry, read from its file once; nullptr when the file no longer says what the index does.
const Node* indexed_node(const IndexedNode& entry) {
  static ReadOnce<Node> nodes;
  const Node& node = nodes.get(entry.id, [&] { return read_node_file(data_dir() / "nodes" / entry.file); });
  const bool same = node.id == entry.id && node.gpu == entry.gpu && node.default_for_gpu == entry.default_for_gpu;
  return same ? &node : nullptr;
}

// The index entry default_for would pick for `gpu_id` (marked default, else the first by id), or nullptr.
const IndexedNode* indexed_default_for(const std::string& gpu_id) {
  const IndexedNode *marked = nullptr, *first = nullptr;
  for (const IndexedNode& e : indexed_nodes()) {
    if (e.gpu != gpu_id) continue;
    if (e.default_for_gpu && (!marked || e.id < marked->id)) marked = &e;
    if (!first || e.id < first->id) first = &e;
  }
  return marked ? marked : first;
}

}  // namespace

Node NodeCatalog::resolve_bundled(const std::string& name) {
  if (catalog_index_applies()) {
    const std::string key = normalize_name(name);
    for (const IndexedNode& e : indexed_nodes())
      if (e.id == key)
        if (const Node* node = indexed_node(e)) return *node;
  }
  return bundled().resolve(name);
}

std::optional<Node> NodeCatalog::bundled_default_for(const std::string& gpu_id) {
  if (catalog_index_applies()) {
    const IndexedNode* entry = indexed_default_for(gpu_id);
    if (!entry) return std::nullopt;
    if (const Node* node = indexed_node(*entry)) return *node;
  }
  const Node* node = bundled().default_for(gpu_id);
  return node ? std::optional<Node>(*node) : std::nullopt;
}

Node NodeCatalog::resolve(const std::string& name) const {
  const std::string key = normalize_name(name);
  for (const Node& n : nodes_)
    if (n.id == key) return n;
  if (name.ends_with(".json")) return read_node_file(name);
  std::vector<std::string> ids;
  for (const Node& n : nodes_) ids.push_back(n.id);
  fail("unknown node '{}' (did you mean {}? `llmco2 nodes` lists all; a node JSON file path also works)", name,
       join_or(nearest_names(name, ids, 3)));
}

const Node* NodeCatalog::default_for(const std::string& gpu_id) const {
  const Node* first = nullptr;
  for (const Node& n : nodes_) {
    if (n.gpu != gpu_id) continue;
    if (n.default_for_gpu) return &n;
    if (!first) first = &n;
  }
  return first;
}

}  // namespace llmco2::hardware
