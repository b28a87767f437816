// Node files and the host power model: values worked by hand on a round-number node (testdata/nodes/test_node.json:
// 8 GPUs; 2 CPUs of 50 cores, 100 W idle, 300 W TDP; 10 DIMMs of 2/5 W; NICs 2x20 + 60 W; switches 200 W; drives
// 50 W; baseboard 100 W; fans 100-1000 W; 4 active 2.5 kW supplies; 8 kW maximum), and refusals of bad files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "hardware/gpu_catalog.h"
#include "hardware/host_power.h"
#include "hardware/node.h"
#include "support/all_modules.h"
#include "support/error_of.h"

namespace llmco2 {
namespace {

Json test_node_json() { return read_json_file(std::string(LLMCO2_TESTDATA) + "/nodes/test_node.json"); }
Node test_node() { return node_from_json(test_node_json(), "test_node.json"); }

std::string node_refusal(const Json& json) {
  return testing_support::error_of([&] { node_from_json(json, "bad.json"); });
}

TEST(Node, ReadsEveryComponent) {
  const Node n = test_node();
  EXPECT_EQ(n.gpus, 8);
  EXPECT_DOUBLE_EQ(n.nics_w, 2 * 20 + 60);  // the NIC list summed
  EXPECT_DOUBLE_EQ(n.psu_capacity_w, 4 * 2500);
  EXPECT_DOUBLE_EQ(n.design_power_w, 8000);  // the vendor maximum
  EXPECT_DOUBLE_EQ(n.gpu_tdp_w, 700);        // h100-sxm's, from the GPU catalog
  EXPECT_EQ(n.psu_efficiency.size(), 4u);
  EXPECT_FALSE(n.measured_idle_w.has_value());
}

// Idle, GPUs at 50 W: CPUs 2 x 100 = 200, DIMMs 10 x 2 = 20, NICs 100 + switches 200 + drives 50 + board 100 = 450,
// so 670 W before fans; heat 670 + 8 x 50 = 1070 W is 13.4% of 8 kW, fans 1000 x 0.134^3 = 2.4 W < the 100 W floor.
// Host 770 W; DC 1170 W is 11.7% of 10 kW: efficiency 0.90 + 0.04 x 0.017 / 0.1 = 0.9068; wall 1170 / 0.9068.
TEST(HostPower, IdleNodeByHand) {
  const Node n = test_node();
  EXPECT_NEAR(host_dc_w(n, 50, false), 770, 1e-9);
  EXPECT_NEAR(psu_efficiency(n, 1170), 0.9068, 1e-12);
  EXPECT_NEAR(node_wall_w(n, 50, false), 1170 / 0.9068, 1e-9);
}

// Serving, GPUs at 600 W: CPUs 200 + 8 busy cores x (300 - 100) / 50 = 232, DIMMs 10 x 5 = 50, fixed 450: 732 W;
// heat 732 + 4800 = 5532 W, speed 0.6915, fans 1000 x 0.6915^3 = 330.66 W; host 1062.66 W; DC 5862.66 W is 58.6% of
// 10 kW: efficiency 0.96 - 0.04 x 0.0863 / 0.5 = 0.95310; wall 6151.15 W.
TEST(HostPower, ServingNodeByHand) {
  const Node n = test_node();
  EXPECT_NEAR(fans_w(n, 5532), 1000 * std::pow(5532.0 / 8000, 3), 1e-9);
  EXPECT_NEAR(host_dc_w(n, 600, true), 1062.656110875, 1e-6);
  EXPECT_NEAR(node_wall_w(n, 600, true), 6151.15286, 1e-4);
}

TEST(HostPower, EfficiencyCurveIsClampedAtItsEnds) {
  const Node n = test_node();
  EXPECT_DOUBLE_EQ(psu_efficiency(n, 100), 0.90);    // 1% load: the curve's first point
  EXPECT_DOUBLE_EQ(psu_efficiency(n, 12000), 0.92);  // 120%: its last
}

TEST(HostPower, FansReachTheirMaximumAtTheNodesMaximumPower) {
  const Node n = test_node();
  EXPECT_DOUBLE_EQ(fans_w(n, 8000), 1000);
  EXPECT_DOUBLE_EQ(fans_w(n, 20000), 1000);
}

// Two of the node's 8 GPUs at 600 W for 10 s: the node at that load (6151.15 W) x 2/8 x 10 s = 15377.88 J, against
// 12000 J of GPU energy.
TEST(EnergyScope, NodeScopeChargesTheUsedGpusShareOfTheWallPower) {
  EnergyScope gpu_scope, node_scope;
  node_scope.node = test_node();
  EXPECT_DOUBLE_EQ(gpu_scope.metered_j(12000, 10, 2), 12000);
  EXPECT_NEAR(node_scope.metered_j(12000, 10, 2), 15377.882155, 1e-5);
  EXPECT_EQ(node_scope.name(), "node");
  EXPECT_EQ(gpu_scope.name(), "gpu");
}

// Wall power grows with GPU power and is never below the GPUs' own draw.
TEST(HostPower, WallPowerIsMonotoneAndAboveTheGpus) {
  const Node n = test_node();
  double last = 0;
  for (double gpu_w = 50; gpu_w <= 700; gpu_w += 10) {
    const double wall = node_wall_w(n, gpu_w, true);
    EXPECT_GT(wall, last);
    EXPECT_GT(wall, n.gpus * gpu_w);
    last = wall;
  }
}

// Without a vendor maximum the fans are sized for the parts' maxima: 8 x 700 W GPUs + CPUs 2 x 300 + DIMMs 10 x 5 +
// NICs 100 + switches 200 + drives 50 + board 100 + fans 1000 = 7700 W; without supply data, Platinum supplies of
// twice that: at 50% of 15.4 kW (7700 W DC) 94% efficient.
TEST(Node, DocumentedFallbacksWhenMaximumAndSuppliesAreUnpublished) {
  Json j = test_node_json();
  j["max_power_w"] = nullptr;
  j["psu"] = Json::parse(R"({"count": null, "active": null, "rated_w": null, "efficiency": null})");
  const Node n = node_from_json(j, "no_psu.json");
  EXPECT_DOUBLE_EQ(n.design_power_w, 7700);
  EXPECT_TRUE(n.psu_assumed);
  EXPECT_DOUBLE_EQ(n.psu_capacity_w, 15400);
  EXPECT_DOUBLE_EQ(psu_efficiency(n, 7700), 0.94);
}

TEST(Node, EveryBundledNodeIsPhysical) {
  for (const Node& n : NodeCatalog::bundled().nodes()) {
    SCOPED_TRACE(n.id);
    const double idle_wall = node_wall_w(n, n.gpu_idle_w, false), full_wall = node_wall_w(n, n.gpu_tdp_w, true);
    EXPECT_GT(idle_wall, n.gpus * n.gpu_idle_w);                                          // the host draws something
    EXPECT_LT(full_wall, 1.05 * n.design_power_w / psu_efficiency(n, n.design_power_w));  // within its design
    EXPECT_GT(full_wall, n.gpus * n.gpu_tdp_w);
  }
  // Every bundled GPU type has a node, so the default scope (the node at the wall) means the same for all of them.
  for (const Gpu& gpu : GpuCatalog::bundled().gpus())
    EXPECT_NE(NodeCatalog::bundled().default_for(gpu.id), nullptr) << gpu.id;
  EXPECT_EQ(NodeCatalog::bundled().default_for("no-such-gpu"), nullptr);
}

// Issue 37: each new GPU type has its node, the one the default scope uses. Figures typed in from the sources the
// files cite: DGX B300 (User Guide: 2x Xeon 6776P, 32 DIMMs, 12 x 3.2 kW supplies, 14.5 kW), the GB300 NVL72 tray
// (2 Grace + 4 GPUs, 1/18 of 8 shelves x 33 kW), and a GENERIC 8-card PCIe host for the RTX PRO 6000 Server Edition.
TEST(Node, BlackwellUltraAndRtxProNodesAreTheDefaults) {
  const NodeCatalog& nodes = NodeCatalog::bundled();
  const Node* dgx = nodes.default_for("b300");
  ASSERT_NE(dgx, nullptr);
  EXPECT_EQ(dgx->id, "dgx-b300");
  EXPECT_EQ(dgx->gpus, 8);
  EXPECT_EQ(dgx->cpu_model, "Intel Xeon 6776P");
  EXPECT_DOUBLE_EQ(dgx->cpu_tdp_w, 350);
  EXPECT_EQ(dgx->dimms, 32);
  EXPECT_DOUBLE_EQ(dgx->psu_capacity_w, 12 * 3200);
  EXPECT_DOUBLE_EQ(dgx->design_power_w, 14500);
  EXPECT_DOUBLE_EQ(dgx->gpu_tdp_w, 1100);
  const Node* tray = nodes.default_for("gb300");
  ASSERT_NE(tray, nullptr);
  EXPECT_EQ(tray->id, "gb300-nvl72-compute-tray");
  EXPECT_EQ(tray->gpus, 4);
  EXPECT_EQ(tray->cpu_sockets, 2);
  EXPECT_EQ(tray->dimms, 0);  // LPDDR5X on the Grace module, in the CPU's power
  EXPECT_NEAR(tray->psu_capacity_w, 8 * 33000.0 / 18, 1);
  EXPECT_DOUBLE_EQ(tray->gpu_tdp_w, 1400);
  const Node* pcie = nodes.default_for("rtx-pro-6000-server");
  ASSERT_NE(pcie, nullptr);
  EXPECT_EQ(pcie->id, "generic-pcie-8gpu-2s-xeon-rtx-pro-6000-server");
  EXPECT_DOUBLE_EQ(pcie->gpu_fabric_w, 0);  // PCIe cards, no NVLink
  EXPECT_TRUE(pcie->psu_assumed);           // generic: no supplies sourced
  // The DGX B300 at full load stays below its 14.5 kW rating, and its host draws more than the DGX B200's.
  EXPECT_LT(node_wall_w(*dgx, dgx->gpu_tdp_w, true), 14500);
  const Node* b200 = nodes.default_for("b200");
  ASSERT_NE(b200, nullptr);
  EXPECT_GT(host_dc_w(*dgx, dgx->gpu_idle_w, false), host_dc_w(*b200, b200->gpu_idle_w, false));
}

TEST(Node, RefusesBadFilesWithOneLine) {
  Json j = test_node_json();
  j["cpu"]["idle_w"] = 400;
  EXPECT_NE(node_refusal(j).find("cpu.idle_w = 400 is not below cpu.tdp_w = 300"), std::string::npos)
      << node_refusal(j);
  j = test_node_json();
  j["sources"].erase("fans");
  EXPECT_NE(node_refusal(j).find("sources has no entry for 'fans'"), std::string::npos) << node_refusal(j);
  j = test_node_json();
  j["psu"]["efficiency"] = Json::parse("[[0.5, 0.96], [0.2, 0.94]]");
  EXPECT_NE(node_refusal(j).find("psu.efficiency loads must increase"), std::string::npos) << node_refusal(j);
  j = test_node_json();
  j["memory"]["idle_w_per_dimm"] = 2000;
  EXPECT_NE(node_refusal(j).find("bad.json: memory: memory.idle_w_per_dimm = 2000 is outside"), std::string::npos)
      << node_refusal(j);
  j = test_node_json();
  j["psu"]["active"] = 9;
  EXPECT_NE(node_refusal(j).find("psu.active = 9 exceeds psu.count = 6"), std::string::npos) << node_refusal(j);
  j = test_node_json();
  j["gpu"] = "h100";
  EXPECT_NE(node_refusal(j).find("key 'gpu' must be a GPU catalog id, found 'h100'"), std::string::npos)
      << node_refusal(j);
}

// The network between nodes (pipeline stages over nodes): Gb/s per GPU and direction, read as bytes per second,
// range-checked and sourced like every other value; a file without it names none.
TEST(Node, ScaleOutNetworkIsReadPerGpuAndSourced) {
  EXPECT_TRUE(test_node().scale_out_kind.empty());
  EXPECT_EQ(test_node().scale_out_bytes_per_s_per_gpu, 0);
  Json j = test_node_json();
  j["scale_out"] = Json::parse(R"({"kind": "infiniband-ndr", "gbps_per_gpu": 400})");
  j["sources"]["scale_out"] = "one 400 Gb/s card per GPU";
  const Node n = node_from_json(j, "net.json");
  EXPECT_EQ(n.scale_out_kind, "infiniband-ndr");
  EXPECT_DOUBLE_EQ(n.scale_out_bytes_per_s_per_gpu, 50e9);
  j["scale_out"]["gbps_per_gpu"] = 40000;  // Gb/s given as Mb/s
  EXPECT_NE(node_refusal(j).find("scale_out.gbps_per_gpu = 40000 is outside"), std::string::npos) << node_refusal(j);
  j["scale_out"]["gbps_per_gpu"] = 400;
  j["sources"].erase("scale_out");
  EXPECT_NE(node_refusal(j).find("sources has no entry for 'scale_out'"), std::string::npos) << node_refusal(j);
}

}  // namespace
}  // namespace llmco2
