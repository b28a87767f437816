// predictor/forest_check.cc - an XGBoost forest parsed, checked and rebuilt before XGBoost sees it.
#include "predictor/forest_check.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/error.h"
#include "core/json_io.h"

namespace llmco2::predictor {
namespace {

// nlohmann's DOM builder with two bounds: nesting depth (its binary reader recurses) and the number of values (an
// optimised UBJSON container of nulls holds any count in a few bytes).
class BoundedBuilder {
 public:
  BoundedBuilder(Json& root, size_t max_values) : dom_(root, false), values_left_(max_values) {}
  bool null() { return count() && dom_.null(); }
  bool boolean(bool v) { return count() && dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return count() && dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return count() && dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t& s) { return count() && dom_.number_float(v, s); }
  bool string(Json::string_t& v) { return count() && dom_.string(v); }
  bool binary(Json::binary_t& v) { return count() && dom_.binary(v); }
  bool start_object(size_t n) { return enter() && dom_.start_object(n); }
  bool key(Json::string_t& k) { return dom_.key(k); }
  bool end_object() { return --depth_, dom_.end_object(); }
  bool start_array(size_t n) { return enter() && dom_.start_array(n); }
  bool end_array() { return --depth_, dom_.end_array(); }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  bool count() { return values_left_ > 0 && (--values_left_, true); }
  bool enter() { return count() && ++depth_ <= kMaxJsonDepth; }
  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  size_t values_left_;
  int depth_ = 0;
};

Json parse_blob(const std::string& blob, const std::string& where) {
  if (blob.size() < 2 || blob[0] != '{') fail("{}: not an XGBoost JSON or UBJSON model", where);
  if (blob[1] == '"' || blob[1] == '\n' || blob[1] == ' ') return parse_json_text(blob, where);
  Json root;
  BoundedBuilder builder(root, blob.size());
  bool ok = false;
  try {
    ok = Json::sax_parse(blob.begin(), blob.end(), &builder, nlohmann::detail::input_format_t::ubjson, true);
  } catch (const Json::exception&) {
  }
  if (!ok) fail("{}: malformed UBJSON model", where);
  return root;
}

const Json& member(const Json& object, std::string_view key, Json::value_t type, const std::string& where) {
  const auto it = object.is_object() ? object.find(key) : object.end();
  if (it == object.end() || it->type() != type) fail("{}: lacks '{}' of type {}", where, key, Json(type).type_name());
  return *it;
}

const Json& object_at(const Json& o, std::string_view key, const std::string& where) {
  return member(o, key, Json::value_t::object, where);
}

// A whole number written as text (XGBoost's parameters: "28"), within [lo, hi].
long text_count(const Json& object, std::string_view key, long lo, long hi, const std::string& where) {
  const std::string& text = member(object, key, Json::value_t::string, where).get_ref<const std::string&>();
  long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi)
    fail("{}: '{}' is '{}', expected a whole number from {} to {}", where, key, text, lo, hi);
  return value;
}

// The array `key` of exactly `size` finite numbers within [lo, hi], whole numbers when `whole`.
const Json& number_array(const Json& tree, std::string_view key, long size, double lo, double hi,
                         const std::string& where, bool whole = true) {
  const Json& a = member(tree, key, Json::value_t::array, where);
  if (static_cast<long>(a.size()) != size) fail("{}: '{}' holds {} values for {} nodes", where, key, a.size(), size);
  for (const Json& v : a) {
    const double x = v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
    if (!std::isfinite(x) || x < lo || x > hi || (whole && x != std::floor(x)))
      fail("{}: '{}' holds {} (expected a number in [{}, {}])", where, key, v.dump(), lo, hi);
  }
  return a;
}

// One tree: every array of the right length, children after their parents (so no cycles), each node but the root
// the child of exactly the node its 'parents' entry names, split features below `features`. Returns the rebuilt tree.
Json checked_tree(const Json& tree, long id, int features, const std::string& where) {
  const Json& param = object_at(tree, "tree_param", where);
  const long n = text_count(param, "num_nodes", 1, kMaxTreeNodes, where);
  if (text_count(param, "num_feature", 0, features, where) != features ||
      text_count(param, "num_deleted", 0, 0, where) || text_count(param, "size_leaf_vector", 0, 0, where))
    fail("{}: tree_param does not describe {} features with no deleted nodes and scalar leaves", where, features);
  constexpr double kRoot = 2147483647, kBig = 3.4e38;
  const Json& left = number_array(tree, "left_children", n, -1, static_cast<double>(n - 1), where);
  const Json& right = number_array(tree, "right_children", n, -1, static_cast<double>(n - 1), where);
  const Json& parents = number_array(tree, "parents", n, 0, kRoot, where);
  const Json& split = number_array(tree, "split_indices", n, 0, features - 1, where);
  Json out = Json::object();
  for (const char* key : {"base_weights", "loss_changes", "sum_hessian", "split_conditions"})
    out[key] = number_array(tree, key, n, -kBig, kBig, where, false);
  out["default_left"] = number_array(tree, "default_left", n, 0, 1, where);
  out["split_type"] = number_array(tree, "split_type", n, 0, 0, where);
  if (parents[0].get<double>() != kRoot) fail("{}: node 0 is not the root", where);
  for (long i = 0; i < n; ++i) {
    const long l = left[i].get<long>(), r = right[i].get<long>();
    if ((l == -1) != (r == -1)) fail("{}: node {} has one child", where, i);
    if (l == -1) continue;
    if (l <= i || r <= i || l == r || parents[l].get<long>() != i || parents[r].get<long>() != i)
      fail("{}: node {} has children {} and {} that do not form a tree", where, i, l, r);
  }
  out["left_children"] = left;
  out["right_children"] = right;
  out["parents"] = parents;
  out["split_indices"] = split;
  for (const char* key : {"categories", "categories_nodes", "categories_segments", "categories_sizes"})
    out[key] = Json::array();
  out["id"] = id;
  out["tree_param"] = {{"num_deleted", "0"},
                       {"num_feature", std::to_string(features)},
                       {"num_nodes", std::to_string(n)},
                       {"size_leaf_vector", "0"}};
  return out;
}

}  // namespace

std::string checked_forest(const std::string& blob, int features, const std::string& source, const std::string& name) {
  const std::string where = fmt::format("{}: forest '{}'", source, name);
  const Json root = parse_blob(blob, where);
  const Json& learner = object_at(root, "learner", where);
  const Json& params = object_at(learner, "learner_model_param", where);
  if (text_count(params, "num_feature", 0, features, where) != features ||
      text_count(params, "num_class", 0, 0, where) || text_count(params, "num_target", 1, 1, where) != 1)
    fail("{}: expected a single-target regression over {} features", where, features);
  const std::string& base = member(params, "base_score", Json::value_t::string, where).get_ref<const std::string&>();
  const auto base_score = parse_double(base);
  if (!base_score) fail("{}: base_score '{}' is not a finite number", where, base);
  if (member(object_at(learner, "objective", where), "name", Json::value_t::string, where) != "reg:squarederror")
    fail("{}: the objective is not reg:squarederror", where);
  const Json& booster = object_at(learner, "gradient_booster", where);
  if (member(booster, "name", Json::value_t::string, where) != "gbtree") fail("{}: the booster is not gbtree", where);
  const Json& model = object_at(booster, "model", where);
  const Json& trees = member(model, "trees", Json::value_t::array, where);
  const long count = static_cast<long>(trees.size());
  if (count < 1 || count > kMaxForestTrees) fail("{}: {} trees (expected 1 to {})", where, count, kMaxForestTrees);
  const long parallel = text_count(object_at(model, "gbtree_model_param", where), "num_parallel_tree", 1, count, where);
  if (count % parallel != 0) fail("{}: {} trees are not whole rounds of {} parallel trees", where, count, parallel);
  Json rebuilt_trees = Json::array();
  for (long i = 0; i < count; ++i)
    rebuilt_trees.push_back(
        checked_tree(trees[static_cast<size_t>(i)], i, features, fmt::format("{} tree {}", where, i)));
  const Json rebuilt = {
      {"version", {1, 7, 4}},
      {"learner",
       {{"attributes", Json::object()},
        {"feature_names", Json::array()},
        {"feature_types", Json::array()},
        {"learner_model_param",
         {{"base_score", fmt::format("{:e}", *base_score)},
          {"boost_from_average", "1"},
          {"num_class", "0"},
          {"num_feature", std::to_string(features)},
          {"num_target", "1"}}},
        {"objective", {{"name", "reg:squarederror"}, {"reg_loss_param", {{"scale_pos_weight", "1"}}}}},
        {"gradient_booster",
         {{"name", "gbtree"},
          {"model",
           {{"gbtree_model_param",
             {{"num_parallel_tree", std::to_string(parallel)},
              {"num_trees", std::to_string(count)},
              {"size_leaf_vector", "0"}}},
            {"tree_info", Json(std::vector<int>(static_cast<size_t>(count), 0))},
            {"trees", rebuilt_trees}}}}}}}};
  return rebuilt.dump();
}

}  // namespace llmco2::predictor
