// config.json -> ModelSpec: every bundled config, family conventions, published parameter counts, clean errors.
#include <gtest/gtest.h>

#include "core/error.h"
#include "model/hf_config.h"
#include "model/model_catalog.h"

namespace llmco2 {
namespace {

ModelSpec bundled(const std::string& id) { return ModelCatalog::bundled().resolve(id); }

std::string error_of(const std::string& file) {
  try {
    read_hf_config(std::string(LLMCO2_TESTDATA) + "/configs/" + file);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HfConfig, EveryBundledConfigParses) {
  const auto& entries = ModelCatalog::bundled().entries();
  EXPECT_EQ(entries.size(), 52u);
  for (const auto& entry : entries) EXPECT_NO_THROW(read_hf_config(entry.config_path)) << entry.id;
}

// Published parameter counts (Hugging Face model cards / safetensors metadata).
TEST(HfConfig, Llama31_8bParameterCountMatchesThePublishedOne) {
  // 2 x 128256 x 4096 (untied embeddings) + 32 x (41943040 attention + 176160768 MLP + 8192 norms) + 4096
  EXPECT_EQ(bundled("llama-3.1-8b").total_params(), 8030261248.0);
}

TEST(HfConfig, MixtralCountsEveryExpertAndTheRouter) {
  const ModelSpec m = bundled("mixtral-8x7b");
  ASSERT_TRUE(m.moe);
  EXPECT_EQ(m.moe->experts, 8);
  EXPECT_EQ(m.moe->experts_per_token, 2);
  EXPECT_EQ(m.total_params(), 46702792704.0);  // 46.7B as published
}

TEST(HfConfig, GemmaHonoursExplicitHeadDim) {
  const ModelSpec m = bundled("gemma-7b");
  EXPECT_EQ(m.head_dim, 256);  // 16 heads x 256 = 4096 != hidden 3072
  EXPECT_EQ(m.hidden, 3072);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.activation, Activation::gelu);
}

TEST(HfConfig, FamilyKeyNames) {
  const ModelSpec bloom = bundled("bloom-7b1");  // n_layer, n_head, n_inner: null -> 4 x hidden
  EXPECT_EQ(bloom.layers, 30);
  EXPECT_EQ(bloom.heads, 32);
  EXPECT_EQ(bloom.intermediate, 4 * 4096);
  EXPECT_EQ(bloom.mlp, MlpKind::plain);
  EXPECT_EQ(bloom.position, PositionKind::alibi);
  const ModelSpec opt = bundled("opt-6.7b");  // ffn_dim, relu
  EXPECT_EQ(opt.intermediate, 16384);
  EXPECT_EQ(opt.activation, Activation::relu);
  const ModelSpec falcon = bundled("falcon-7b");  // multi_query -> 1 KV head, parallel attention
  EXPECT_EQ(falcon.layer_attention[0].kv_heads, 1);
  EXPECT_EQ(falcon.head_dim, 64);
  EXPECT_TRUE(falcon.parallel_attention);
}

TEST(HfConfig, SlidingWindowLayers) {
  const ModelSpec mistral = bundled("mistral-7b-v0.1");
  for (const auto& a : mistral.layer_attention) EXPECT_EQ(a.window_tokens, 4096);
  EXPECT_EQ(bundled("mistral-7b-instruct-v0.3").layer_attention[0].window_tokens, 0);  // sliding_window: null
  EXPECT_EQ(bundled("qwen2-7b").layer_attention[0].window_tokens, 0);                  // use_sliding_window: false
  const ModelSpec gemma2 = bundled("gemma-2-9b");  // even layers local, odd layers global
  EXPECT_EQ(gemma2.layer_attention[0].window_tokens, 4096);
  EXPECT_EQ(gemma2.layer_attention[1].window_tokens, 0);
  const ModelSpec gemma3 = bundled("gemma-3-27b-it");  // 5 local layers per global layer
  EXPECT_EQ(gemma3.layer_attention[4].window_tokens, 1024);
  EXPECT_EQ(gemma3.layer_attention[5].window_tokens, 0);
  const ModelSpec oss = bundled("gpt-oss-20b");  // layer_types alternate, sliding first
  EXPECT_EQ(oss.layer_attention[0].window_tokens, 128);
  EXPECT_EQ(oss.layer_attention[1].window_tokens, 0);
  EXPECT_EQ(oss.moe->experts, 32);
  EXPECT_EQ(oss.moe->experts_per_token, 4);
}

TEST(HfConfig, MoeWidthsAndSharedExperts) {
  const ModelSpec qwen3 = bundled("qwen3-30b-a3b");
  EXPECT_EQ(qwen3.moe->expert_intermediate, 768);
  EXPECT_EQ(qwen3.moe->shared_intermediate, 0);
  const ModelSpec qwen2 = bundled("qwen2-57b-a14b");
  EXPECT_EQ(qwen2.moe->expert_intermediate, 2560);
  EXPECT_EQ(qwen2.moe->shared_intermediate, 20480);
}

TEST(HfConfig, PerLayerKvHeads) {
  const ModelSpec deci = bundled("decilm-7b");
  EXPECT_EQ(deci.layer_attention[0].kv_heads, 4);
  EXPECT_EQ(deci.layer_attention[5].kv_heads, 2);
  EXPECT_EQ(deci.layer_attention[20].kv_heads, 1);
}

TEST(HfConfig, DtypeDefaultsFromConfig) {
  EXPECT_EQ(bundled("llama-2-7b").default_dtype, DType::fp16);
  EXPECT_TRUE(bundled("llama-2-7b").dtype_from_config);
  EXPECT_FALSE(bundled("bloom-560m").dtype_from_config);  // no torch_dtype: bf16 assumed
}

TEST(HfConfig, MalformedConfigsNameTheFileAndKey) {
  const std::string missing = error_of("missing_hidden.json");
  EXPECT_NE(missing.find("missing_hidden.json"), std::string::npos) << missing;
  EXPECT_NE(missing.find("missing key 'hidden_size'"), std::string::npos) << missing;
  EXPECT_NE(error_of("bad_type.json").find("key 'hidden_size' must be a number"), std::string::npos);
  EXPECT_NE(error_of("unknown_family.json").find("unsupported model_type 'mamba'"), std::string::npos);
  EXPECT_NE(error_of("truncated.json").find("malformed JSON"), std::string::npos);
  EXPECT_NE(error_of("too_many_kv_heads.json").find("must be a multiple"), std::string::npos);
  EXPECT_NE(error_of("negative_layers.json").find("positive whole number"), std::string::npos);
  EXPECT_NE(error_of("does_not_exist.json").find("cannot open"), std::string::npos);
}

TEST(ModelCatalog, ResolvesIdsHfReposAndPaths) {
  EXPECT_EQ(bundled("meta-llama/Llama-3.1-8B").id, "llama-3.1-8b");
  EXPECT_EQ(bundled("LLAMA-3.1-8B").id, "llama-3.1-8b");
  const ModelSpec tiny = bundled(std::string(LLMCO2_TESTDATA) + "/configs/tiny_llama.json");
  EXPECT_EQ(tiny.hidden, 64);
  EXPECT_EQ(tiny.default_dtype, DType::fp16);
}

TEST(ModelCatalog, UnknownModelSuggestsNearestIds) {
  try {
    bundled("llama-3.1-9b");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean llama-3.1-8b"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace llmco2
