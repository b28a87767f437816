// predictor/gnn.cc - the Eigen forward pass and the model-file mapping of the GraphSAGE weights.
#include "predictor/gnn.h"

#include "core/error.h"

namespace llmco2::predictor {
namespace {

RowMatrix standardised(const std::vector<float>& raw, int rows, const Standardiser& s) {
  const int cols = static_cast<int>(s.mean.size());
  RowMatrix x = Eigen::Map<const RowMatrix>(raw.data(), rows, cols);
  for (int c = 0; c < cols; ++c) x.col(c) = (x.col(c).array() - s.mean[c]) / s.scale[c];
  return x;
}

// Mean of each node's in-neighbours (0 for a node without any), as PyG's SAGEConv aggregates.
RowMatrix mean_of_in_neighbours(const RowMatrix& h, const std::vector<std::pair<int, int>>& edges) {
  RowMatrix sum = RowMatrix::Zero(h.rows(), h.cols());
  Eigen::VectorXf degree = Eigen::VectorXf::Zero(h.rows());
  for (const auto& [from, to] : edges) {
    sum.row(to) += h.row(from);
    degree[to] += 1;
  }
  for (int i = 0; i < h.rows(); ++i)
    if (degree[i] > 0) sum.row(i) /= degree[i];
  return sum;
}

RowMatrix sage(const RowMatrix& h, const std::vector<std::pair<int, int>>& edges, const RowMatrix& self,
               const RowMatrix& neigh, const Eigen::VectorXf& bias) {
  RowMatrix out = h * self.transpose() + mean_of_in_neighbours(h, edges) * neigh.transpose();
  out.rowwise() += bias.transpose();
  return out.cwiseMax(0.0f);
}

Tensor to_tensor(const RowMatrix& m) {
  return {{static_cast<long>(m.rows()), static_cast<long>(m.cols())},
          std::vector<float>(m.data(), m.data() + m.size())};
}
Tensor to_tensor(const Eigen::VectorXf& v) {
  return {{static_cast<long>(v.size())}, std::vector<float>(v.data(), v.data() + v.size())};
}

RowMatrix matrix(const ModelFile& f, const std::string& name, long rows, long cols, const std::string& source) {
  const Tensor& t = expect_tensor(f, name, {rows, cols}, source);
  return Eigen::Map<const RowMatrix>(t.values.data(), rows, cols);
}
Eigen::VectorXf vector(const ModelFile& f, const std::string& name, long size, const std::string& source) {
  const Tensor& t = expect_tensor(f, name, {size}, source);
  return Eigen::Map<const Eigen::VectorXf>(t.values.data(), size);
}

}  // namespace

std::string_view target_scaling_name(TargetScaling scaling) {
  return scaling == TargetScaling::log ? "log" : "sim_ratio";
}

TargetScaling parse_target_scaling(std::string_view name) {
  if (name == "log") return TargetScaling::log;
  if (name == "sim_ratio") return TargetScaling::sim_ratio;
  fail("unknown target scaling '{}' (expected log or sim_ratio)", name);
}

std::array<double, kOutputs> gnn_forward(const GnnWeights& w, const EncodedGraph& g) {
  const RowMatrix x = standardised(g.x, g.nodes, w.node_norm);
  const RowMatrix h1 = sage(x, g.edges, w.sage1_self, w.sage1_neigh, w.sage1_bias);
  const RowMatrix h2 = sage(h1, g.edges, w.sage2_self, w.sage2_neigh, w.sage2_bias);
  return gnn_readout(w, h2.data(), g.nodes, g);
}

std::array<double, kOutputs> gnn_readout(const GnnWeights& w, const float* h2, int nodes, const EncodedGraph& g) {
  const Eigen::Map<const RowMatrix> h(h2, nodes, w.hidden);
  const RowMatrix globals = standardised(g.globals, 1, w.global_norm);
  Eigen::VectorXf z(w.hidden + globals.cols());
  z << h.colwise().mean().transpose(), globals.row(0).transpose();
  const Eigen::VectorXf hidden = (w.head1 * z + w.head1_bias).cwiseMax(0.0f);
  const Eigen::VectorXf out = w.head2 * hidden + w.head2_bias;
  std::array<double, kOutputs> y{};
  for (int i = 0; i < kOutputs; ++i) y[i] = out[i] + (w.scaling == TargetScaling::sim_ratio ? g.physics_log[i] : 0.0);
  return y;
}

ModelFile gnn_to_file(const GnnWeights& w) {
  ModelFile f;
  f.header = {{"kind", "gnn"},
              {"features", feature_set_name(w.features)},
              {"scaling", target_scaling_name(w.scaling)},
              {"phase_outputs", w.phase_outputs},
              {"hidden", w.hidden},
              {"node_features", node_feature_names(w.features)},
              {"global_features", global_feature_names(w.features)},
              {"info", w.info}};
  const auto norm = [&](const std::string& name, const Standardiser& s) {
    f.tensors[name + "_mean"] = {{static_cast<long>(s.mean.size())}, s.mean};
    f.tensors[name + "_scale"] = {{static_cast<long>(s.scale.size())}, s.scale};
  };
  norm("node_norm", w.node_norm);
  norm("global_norm", w.global_norm);
  f.tensors["sage1_self"] = to_tensor(w.sage1_self);
  f.tensors["sage1_neigh"] = to_tensor(w.sage1_neigh);
  f.tensors["sage1_bias"] = to_tensor(w.sage1_bias);
  f.tensors["sage2_self"] = to_tensor(w.sage2_self);
  f.tensors["sage2_neigh"] = to_tensor(w.sage2_neigh);
  f.tensors["sage2_bias"] = to_tensor(w.sage2_bias);
  f.tensors["head1"] = to_tensor(w.head1);
  f.tensors["head1_bias"] = to_tensor(w.head1_bias);
  f.tensors["head2"] = to_tensor(w.head2);
  f.tensors["head2_bias"] = to_tensor(w.head2_bias);
  return f;
}

GnnWeights gnn_from_file(const ModelFile& f, const std::string& source) {
  if (f.header.value("kind", "") != "gnn") fail("{}: not a GNN model (kind '{}')", source, f.header.value("kind", ""));
  GnnWeights w;
  try {
    w.features = parse_feature_set(f.header.at("features").get<std::string>());
    w.scaling = parse_target_scaling(f.header.at("scaling").get<std::string>());
    w.phase_outputs = f.header.at("phase_outputs").get<bool>();
    const Json& hidden = f.header.at("hidden");
    if (!hidden.is_number_integer() || hidden.get<long>() < 1 || hidden.get<long>() > 4096)
      fail("{}: key 'hidden' must be a whole number from 1 to 4096, found {}", source, hidden.dump());
    w.hidden = hidden.get<int>();
    if (f.header.at("node_features") != Json(node_feature_names(w.features)) ||
        f.header.at("global_features") != Json(global_feature_names(w.features)))
      fail("{}: the model's feature columns differ from this build's '{}' features (retrain it)", source,
           feature_set_name(w.features));
    w.info = f.header.value("info", Json::object());
  } catch (const Json::exception& e) {
    fail("{}: bad GNN header: {}", source, e.what());
  } catch (const Error& e) {
    fail("{}: {}", source, e.what());
  }
  const long nodes = node_width(w.features), globals = global_width(w.features), h = w.hidden;
  const auto norm = [&](const std::string& name, long size) {
    return Standardiser{expect_tensor(f, name + "_mean", {size}, source).values,
                        expect_tensor(f, name + "_scale", {size}, source).values};
  };
  w.node_norm = norm("node_norm", nodes);
  w.global_norm = norm("global_norm", globals);
  w.sage1_self = matrix(f, "sage1_self", h, nodes, source);
  w.sage1_neigh = matrix(f, "sage1_neigh", h, nodes, source);
  w.sage1_bias = vector(f, "sage1_bias", h, source);
  w.sage2_self = matrix(f, "sage2_self", h, h, source);
  w.sage2_neigh = matrix(f, "sage2_neigh", h, h, source);
  w.sage2_bias = vector(f, "sage2_bias", h, source);
  w.head1 = matrix(f, "head1", h, h + globals, source);
  w.head1_bias = vector(f, "head1_bias", h, source);
  w.head2 = matrix(f, "head2", kOutputs, h, source);
  w.head2_bias = vector(f, "head2_bias", kOutputs, source);
  return w;
}

}  // namespace llmco2::predictor
