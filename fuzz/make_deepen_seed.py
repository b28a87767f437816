#!/usr/bin/env python3
"""fuzz/make_deepen_seed.py - writes DeepEn model files to fuzz/corpus/model_file/: deepen-one-split.model, whose two
forests (XGBoost JSON) are one tree each, a root split on feature 16 at 17.6 with two leaves, small enough to be a
seed the fuzzer can mutate (the bundled deepen.model is 3 MB); and two crafted ones that XGBoost itself trusts:
deepen-cycle.model (node 1's left child is the root: prediction loops for ever) and deepen-split-feature.model (a split
on feature 100000 of 28: reads past the row). Layout: predictor/model_file.h."""
import json
import struct

FEATURES = 28  # deepen_feature_count(): 13 kernel types + 9 sizes + 6 flags


def forest(left_leaf, right_leaf, edit=None):
    tree = {
        "base_weights": [0.0, left_leaf, right_leaf], "categories": [], "categories_nodes": [],
        "categories_segments": [], "categories_sizes": [], "default_left": [0, 0, 0], "id": 0,
        "left_children": [1, -1, -1], "loss_changes": [1.0, 0.0, 0.0], "parents": [2147483647, 0, 0],
        "right_children": [2, -1, -1], "split_conditions": [17.6, left_leaf, right_leaf],
        "split_indices": [16, 0, 0], "split_type": [0, 0, 0], "sum_hessian": [2.0, 1.0, 1.0],
        "tree_param": {"num_deleted": "0", "num_feature": str(FEATURES), "num_nodes": "3", "size_leaf_vector": "0"}}
    if edit:
        edit(tree)
    return json.dumps({"version": [1, 7, 4], "learner": {
        "attributes": {}, "feature_names": [], "feature_types": [],
        "gradient_booster": {"model": {"gbtree_model_param": {"num_parallel_tree": "1", "num_trees": "1",
                                                               "size_leaf_vector": "0"},
                                       "tree_info": [0], "trees": [tree]}, "name": "gbtree"},
        "learner_model_param": {"base_score": "5E-1", "boost_from_average": "1", "num_class": "0",
                                "num_feature": str(FEATURES), "num_target": "1"},
        "objective": {"name": "reg:squarederror", "reg_loss_param": {"scale_pos_weight": "1"}}}}).encode()


def fnv1a(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) % (1 << 64)
    return h


def write(name, edit=None):
    energy, latency = forest(-2.0, 1.5, edit), forest(-9.0, -7.0, edit)
    header = json.dumps({"kind": "deepen", "feature_count": FEATURES, "entries": [
        {"name": "energy_forest", "type": "bytes", "size": len(energy)},
        {"name": "latency_forest", "type": "bytes", "size": len(latency)}]}).encode()
    body = b"LLMCO2PM" + struct.pack("<IQ", 1, len(header)) + header + energy + latency
    with open("fuzz/corpus/model_file/" + name, "wb") as out:
        out.write(body + struct.pack("<Q", fnv1a(body)))


def cycle(tree):
    tree["left_children"], tree["right_children"], tree["split_conditions"][1] = [1, 0, -1], [2, 2, -1], 1e30


def far_feature(tree):
    tree["split_indices"][0] = 100000


write("deepen-one-split.model")
write("deepen-cycle.model", cycle)
write("deepen-split-feature.model", far_feature)
