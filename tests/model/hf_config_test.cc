// config.json -> ModelSpec: every bundled config, family conventions, published parameter counts, clean errors.
#include <gtest/gtest.h>

#include "core/error.h"
#include "model/hf_config.h"
#include "model/model_catalog.h"
#include "support/all_modules.h"
#include "support/temp_file.h"

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
  EXPECT_EQ(entries.size(), 76u);
  for (const auto& entry : entries)
    EXPECT_NO_THROW(read_hf_config(ModelCatalog::bundled().config_path(entry))) << entry.id;
}

// Published parameter counts (Hugging Face model cards / safetensors metadata).
TEST(HfConfig, Llama31_8bParameterCountMatchesThePublishedOne) {
  // 2 x 128256 x 4096 (untied embeddings) + 32 x (41943040 attention + 176160768 MLP + 8192 norms) + 4096
  EXPECT_EQ(bundled("llama-3.1-8b").total_params(), 8030261248.0);
}

// Total and active parameters as worked out by hand, and within `tolerance` (relative) of the card's figures.
void expect_params(const ModelSpec& m, double total, double active, double card_total, double card_active,
                   double tolerance) {
  EXPECT_DOUBLE_EQ(m.total_params(), total) << m.id;
  EXPECT_DOUBLE_EQ(m.active_params(), active) << m.id;
  EXPECT_NEAR(m.total_params() / card_total, 1.0, tolerance) << m.id;
  EXPECT_NEAR(m.active_params() / card_active, 1.0, tolerance) << m.id;
}

TEST(HfConfig, Bloom176bParameterCountMatchesTheModelCard) {
  // 70 x (12 h^2 + 13 h) + 250880 h (tied) + 2 h (final LayerNorm), h = 14336: 176,247,242,752. The card's
  // 176,247,271,424 also counts the embedding LayerNorm (2 x 14336 = 28,672), which llmco2 neglects.
  const ModelSpec bloom = bundled("bloom-176b");  // n_embed, n_layer, num_attention_heads; ALiBi; MLP 4 x hidden
  EXPECT_EQ(bloom.hidden, 14336);
  EXPECT_EQ(bloom.position, PositionKind::alibi);
  EXPECT_DOUBLE_EQ(bloom.total_params(), 176247271424.0 - 28672.0);
}

TEST(HfConfig, Falcon40bReleaseFormatIsTheNewDecoderArchitecture) {
  // model_type RefinedWeb, n_head 128, n_head_kv 8, n_layer 60: 8 KV groups, ln_attn and ln_mlp, parallel block.
  const ModelSpec falcon = bundled("falcon-40b");
  EXPECT_EQ(falcon.family, "falcon");
  EXPECT_EQ(falcon.layer_specs[0].attention.kv_heads, 8);
  EXPECT_EQ(falcon.head_dim, 64);
  EXPECT_TRUE(falcon.parallel_attention);
  EXPECT_EQ(falcon.norms_per_layer, 2);
  // Per layer: q 8192 x 8192 + k, v 8192 x 512 + o 8192 x 8192 = 142,606,336; MLP 2 x 8192 x 32768 = 536,870,912;
  // two LayerNorms 32,768. 60 layers + 65024 x 8192 tied embeddings + final norm = 41,303,293,952. HF's 41.8B counts
  // the stored LM head copy too (+532,676,608 = 41,835,970,560); tied, it is held once.
  EXPECT_DOUBLE_EQ(falcon.total_params(), 41303293952.0);
  EXPECT_NEAR((falcon.total_params() + falcon.lm_head_params()) / 1e9, 41.8, 0.05);
}

TEST(HfConfig, GptJ6bCountsItsUntiedHeadWithBias) {
  // n_embd 4096, n_layer 28, n_head 16, rotary_dim 64, n_inner null (4 x 4096), vocab 50400, gelu_new.
  const ModelSpec gptj = bundled("gpt-j-6b");
  EXPECT_EQ(gptj.family, "gptj");
  EXPECT_EQ(gptj.head_dim, 256);
  EXPECT_EQ(gptj.rotary_dims(), 64);
  EXPECT_EQ(gptj.intermediate, 16384);
  EXPECT_TRUE(gptj.parallel_attention);
  EXPECT_EQ(gptj.norms_per_layer, 1);                 // ln_1 feeds attention and MLP
  EXPECT_EQ(gptj.activation, Activation::gelu_tanh);  // NewGELUActivation is the tanh form
  // Per layer: ln_1 8,192; q, k, v, out_proj 4 x 4096^2 = 67,108,864 (no biases); fc_in 4096 x 16384 + 16,384;
  // fc_out 16384 x 4096 + 4,096: 201,355,264. 28 layers 5,637,947,392 + wte 206,438,400 + ln_f 8,192 + lm_head
  // 206,438,400 + its bias 50,400 = 6,050,882,784.
  EXPECT_EQ(gptj.layer_params(0), 201355264.0);
  EXPECT_EQ(gptj.lm_head_params(), 206438400.0 + 50400.0);
  EXPECT_EQ(gptj.total_params(), 6050882784.0);
  // The card's 6,053,381,344 counts the 8-way sharded mesh-transformer-jax checkpoint: the replicated LayerNorms and
  // fc_out biases 8 times (7 x (8,192 + 4,096) x 28 = 2,408,448 more), ln_f 8 times (+57,344) and the embedding's
  // per-shard bias of 4,096 (+32,768, absent from the HF model): 2,498,560 in all.
  EXPECT_EQ(gptj.total_params() + 7.0 * (8192 + 4096) * 28 + 7.0 * 8192 + 8.0 * 4096, 6053381344.0);
}

TEST(HfConfig, Pythia12bMatchesTheModelCard) {
  // hidden 5120, 36 layers, 40 heads, intermediate 20480, vocab 50688, rotary_pct 0.25, parallel residual.
  // Per layer: two LayerNorms 20,480; query_key_value 5120 x 15360 + 15,360; dense 5120^2 + 5,120; dense_h_to_4h
  // 5120 x 20480 + 20,480; dense_4h_to_h 20480 x 5120 + 5,120: 314,639,360. 36 layers + embed_in and embed_out
  // 2 x 50688 x 5120 + final LayerNorm 10,240 = 11,846,072,320, the card's figure.
  const ModelSpec pythia = read_hf_config(std::string(LLMCO2_TESTDATA) + "/configs/EleutherAI-pythia-12b.json");
  EXPECT_EQ(pythia.family, "gpt_neox");
  EXPECT_EQ(pythia.rotary_dims(), 32);  // int(128 x 0.25)
  EXPECT_TRUE(pythia.parallel_attention);
  EXPECT_EQ(pythia.norms_per_layer, 2);
  EXPECT_TRUE(pythia.qkv_bias && pythia.o_bias && pythia.mlp_bias);
  EXPECT_FALSE(pythia.lm_head_bias);
  EXPECT_EQ(pythia.layer_params(0), 314639360.0);
  EXPECT_EQ(pythia.total_params(), 11846072320.0);
  // OpenAssistant's SFT resized the vocabulary to 50,288: 400 rows fewer in each of the two tables.
  EXPECT_EQ(bundled("oasst-sft-1-pythia-12b").total_params(), 11846072320.0 - 2.0 * 400 * 5120);
}

TEST(HfConfig, GptNeoXSequentialResidualAndFullRotary) {
  const ModelSpec redpajama = bundled("redpajama-incite-7b-chat");  // use_parallel_residual false, rotary_pct 1.0
  EXPECT_FALSE(redpajama.parallel_attention);
  EXPECT_EQ(redpajama.rotary_dims(), 128);
  EXPECT_TRUE(redpajama.reconstructed);
  EXPECT_EQ(bundled("stablelm-tuned-alpha-7b").rotary_dims(), 32);  // 6144 / 48 = 128 x 0.25
}

TEST(HfConfig, BadRotaryShapesNameTheKey) {
  auto error_of_json = [](const std::string& text) {
    try {
      model_from_hf_config(Json::parse(text), "rotary.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string neox = R"({"model_type": "gpt_neox", "hidden_size": 512, "num_hidden_layers": 2,
      "num_attention_heads": 8, "intermediate_size": 2048, "vocab_size": 1000, "rotary_pct": 1.5})";
  EXPECT_EQ(error_of_json(neox), "rotary.json: key 'rotary_pct' must be above 0 and at most 1, found 1.5");
  const std::string gptj = R"({"model_type": "gptj", "n_embd": 512, "n_layer": 2, "n_head": 8,
      "vocab_size": 1000, "rotary_dim": 128})";
  EXPECT_EQ(error_of_json(gptj), "rotary.json: key 'rotary_dim' (128) exceeds the head dimension (64)");
}

TEST(HfConfig, Qwen3Coder480bIsAllMoeWithoutASharedExpert) {
  const ModelSpec coder = bundled("qwen3-coder-480b-a35b-instruct");
  EXPECT_EQ(coder.layers_with(FfnKind::moe), 62);  // decoder_sparse_step 1, mlp_only_layers []
  EXPECT_EQ(coder.moe->shared_intermediate, 0);    // shared_expert_intermediate_size: 0
  // Per layer: attention 6144 x 12288 x 2 + 6144 x 1024 x 2 = 163,577,856; 160 experts x 3 x 6144 x 2560
  // (47,185,920 each); router 6144 x 160; 2 norms. 62 layers + 2 x 151936 x 6144 + 6144 = 480,154,859,520 (480B);
  // active: less 62 x 152 idle experts = 35,474,749,440 (A35B).
  expect_params(coder, 480154859520.0, 35474749440.0, 480e9, 35e9, 0.015);
}

TEST(HfConfig, DeepSeekV3MlaAndMoeMatchThePublishedSize) {
  const ModelSpec m = bundled("deepseek-v3.1");
  ASSERT_TRUE(m.mla && m.moe);
  EXPECT_EQ(m.mla->q_lora_rank, 1536);
  EXPECT_EQ(m.mla->cached_elements(), 512 + 64);  // kv_lora_rank + qk_rope_head_dim per token and layer
  EXPECT_EQ(m.layer_specs[0].mixer, MixerKind::mla);
  EXPECT_EQ(m.layer_specs[2].ffn, FfnKind::dense);  // first_k_dense_replace 3
  EXPECT_EQ(m.layer_specs[3].ffn, FfnKind::moe);
  EXPECT_EQ(m.moe->shared_intermediate, 2048);  // n_shared_experts 1 x moe_intermediate_size
  EXPECT_TRUE(m.moe->router_bias);              // noaux_tc: e_score_correction_bias
  // MLA per layer: q_a 7168 x 1536 + 1536 + q_b 1536 x 128 x 192 + kv_a 7168 x 576 + 512 + kv_b 512 x 128 x 256
  // + o 128 x 128 x 7168 = 187,107,328. Dense MLP 3 x 7168 x 18432 = 396,361,728. MoE: 256 experts x 44,040,192
  // + shared 44,040,192 + router 7168 x 256 + 256 = 11,320,164,608. 3 dense + 58 MoE layers (+ 2 x 7168 norms each)
  // + 2 x 129280 x 7168 untied embeddings + 7168 = 671,026,419,200 (card: 671B, MTP layer excluded). Active: less
  // 58 x 248 idle experts = 37,552,297,472 (card: 37B; within 1.5%).
  EXPECT_DOUBLE_EQ(m.mla_params(), 187107328.0);
  expect_params(m, 671026419200.0, 37552297472.0, 671e9, 37e9, 0.015);
  EXPECT_EQ(m.default_precision.to_string(), "wfp8-afp8-kvbf16-blk");         // block fp8, ue8m0 scales
  EXPECT_DOUBLE_EQ(bundled("deepseek-r1").total_params(), m.total_params());  // same shape keys
  EXPECT_EQ(bundled("deepseek-v3.1-nvfp4").default_precision, (Precision{DType::nvfp4, DType::nvfp4, DType::fp8}));
}

TEST(HfConfig, Llama4ScoutReadsItsTextConfig) {
  const ModelSpec m = bundled("llama-4-scout-17b-16e-instruct");  // Llama4ForConditionalGeneration
  EXPECT_EQ(m.family, "llama4_text");
  EXPECT_EQ(m.hidden, 5120);
  EXPECT_EQ(m.intermediate, 16384);             // intermediate_size_mlp: dense layers (none in Scout)
  EXPECT_EQ(m.moe->expert_intermediate, 8192);  // intermediate_size: experts
  EXPECT_EQ(m.moe->shared_intermediate, 8192);  // one shared expert of the same width (modelling code)
  EXPECT_EQ(m.layers_with(FfnKind::moe), 48);   // interleave_moe_layer_step 1
  // no_rope_layers [] -> every 4th layer NoPE with full attention; the others RoPE, chunks of 8192.
  EXPECT_EQ(m.layer_specs[0].attention.chunk_tokens, 8192);
  EXPECT_TRUE(m.layer_specs[0].attention.rope);
  EXPECT_EQ(m.layer_specs[3].attention.chunk_tokens, 0);
  EXPECT_FALSE(m.layer_specs[3].attention.rope);
  // Per layer: attention 2 x 5120 x 5120 + 2 x 5120 x 1024 = 62,914,560; 16 + 1 shared experts x 3 x 5120 x 8192
  // (125,829,120) + router 5120 x 16; 2 norms. 48 layers + 2 x 202048 x 5120 + 5120 = 107,769,861,120 (card:
  // 109B with the vision encoder); active: less 48 x 15 idle experts = 17,172,894,720 (card: 17B).
  expect_params(m, 107769861120.0, 17172894720.0, 109e9, 17e9, 0.015);
}

TEST(HfConfig, ReconstructedLlama4MaverickInterleavesDenseAndMoeLayers) {
  const ModelSpec m = bundled("llama-4-maverick-17b-128e-instruct");
  EXPECT_TRUE(m.reconstructed);
  EXPECT_FALSE(bundled("llama-4-scout-17b-16e-instruct").reconstructed);
  EXPECT_EQ(m.layer_specs[0].ffn, FfnKind::dense);  // interleave_moe_layer_step 2: layers 1, 3, ..., 47 are MoE
  EXPECT_EQ(m.layer_specs[1].ffn, FfnKind::moe);
  EXPECT_EQ(m.layers_with(FfnKind::moe), 24);
  // 24 MoE layers: attention 62,914,560 + 129 experts x 125,829,120 + router 5120 x 128; 24 dense layers:
  // attention + 3 x 5120 x 16384 = 251,658,240; 2 norms each; 2 x 202048 x 5120 + 5120 embeddings and final norm:
  // 400,711,848,960 (card: 400B). Active: less 24 x 127 idle experts = 17,184,691,200 (card: 17B).
  expect_params(m, 400711848960.0, 17184691200.0, 400e9, 17e9, 0.015);
}

TEST(HfConfig, ReconstructedGemma3_12bAndStarCoder2_15b) {
  const ModelSpec gemma = bundled("gemma-3-12b-it");
  EXPECT_TRUE(gemma.reconstructed);
  EXPECT_EQ(gemma.vocab, 262208);  // Gemma3TextConfig's default, as the official 27B text_config leaves it
  int local = 0;
  for (const auto& layer : gemma.layer_specs) local += layer.attention.window_tokens == 1024 ? 1 : 0;
  EXPECT_EQ(local, 40);  // sliding_window_pattern 6: 5 local layers per global one, 8 global
  // Per layer: q, o 3840 x 4096, k, v 3840 x 2048 (47,185,920) + MLP 3 x 3840 x 15360 + 4 norms; 48 layers + tied
  // 262208 x 3840 embeddings + final norm = 11,766,009,600 (card: 12B with the vision encoder).
  EXPECT_DOUBLE_EQ(gemma.total_params(), 11766009600.0);
  const ModelSpec starcoder = bundled("starcoder2-15b");
  EXPECT_TRUE(starcoder.reconstructed);
  // Per layer: attention with biases 81,802,240, MLP 2 x 6144 x 24576 + biases 302,020,608, 2 LayerNorms 24,576;
  // 40 layers + tied 49152 x 6144 embeddings + final LayerNorm = 15,655,899,136 (card: 15B).
  EXPECT_DOUBLE_EQ(starcoder.total_params(), 15655899136.0);
  for (const auto& layer : starcoder.layer_specs) EXPECT_EQ(layer.attention.window_tokens, 4096);
}

TEST(HfConfig, ReconstructedNemotronNanoV2IsAHybridOfMambaAttentionAndMlpLayers) {
  const ModelSpec m = bundled("nemotron-nano-9b-v2");
  EXPECT_TRUE(m.reconstructed);
  EXPECT_EQ(m.layers_with(MixerKind::mamba), 27);     // 'M'
  EXPECT_EQ(m.layers_with(MixerKind::attention), 4);  // '*'
  EXPECT_EQ(m.layers_with(FfnKind::dense), 25);       // '-'
  EXPECT_EQ(m.layer_specs[0].ffn, FfnKind::none);
  EXPECT_EQ(m.layer_specs[1].mixer, MixerKind::none);
  EXPECT_EQ(m.activation, Activation::relu2);
  EXPECT_EQ(m.mlp, MlpKind::plain);
  EXPECT_EQ(m.position, PositionKind::none);
  // Mamba layer: in_proj 4480 x (10240 z + 12288 xBC + 128 dt) = 101,498,880; conv1d 12288 x 4 + bias 12288;
  // dt_bias, A_log, D 3 x 128; gated norm 10240; out_proj 10240 x 4480 = 45,875,200: 147,446,144 (+ its norm).
  EXPECT_DOUBLE_EQ(m.mamba_params(), 147446144.0);
  // 27 x 147,450,624 + 25 MLP layers x (2 x 4480 x 15680 + 4480) + 4 attention layers x (2 x 4480 x 5120 +
  // 2 x 4480 x 1024 + 4480) + 2 x 131072 x 4480 untied + 4480 = 8,888,227,328 (card: 8.9B).
  EXPECT_DOUBLE_EQ(m.total_params(), 8888227328.0);
  EXPECT_NEAR(m.total_params() / 8.9e9, 1.0, 0.005);
  // 12B: 28 Mamba, 6 attention, 28 MLP layers at hidden 5120, FFN 20480: 12,310,001,152 (card: 12.3B).
  const ModelSpec twelve = bundled("nemotron-nano-12b-v2");
  EXPECT_EQ(twelve.layers_with(MixerKind::mamba), 28);
  EXPECT_EQ(twelve.layers_with(MixerKind::attention), 6);
  EXPECT_DOUBLE_EQ(twelve.total_params(), 12310001152.0);
  EXPECT_NEAR(twelve.total_params() / 12.3e9, 1.0, 0.005);
}

TEST(HfConfig, Qwen25_3bMatchesItsSafetensorsCount) {
  EXPECT_DOUBLE_EQ(bundled("qwen2.5-3b-instruct").total_params(), 3085938688.0);  // HF safetensors metadata
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
  EXPECT_EQ(falcon.layer_specs[0].attention.kv_heads, 1);
  EXPECT_EQ(falcon.head_dim, 64);
  EXPECT_TRUE(falcon.parallel_attention);
}

TEST(HfConfig, SlidingWindowLayers) {
  const ModelSpec mistral = bundled("mistral-7b-v0.1");
  for (const auto& a : mistral.layer_specs) EXPECT_EQ(a.attention.window_tokens, 4096);
  EXPECT_EQ(bundled("mistral-7b-instruct-v0.3").layer_specs[0].attention.window_tokens, 0);  // sliding_window: null
  EXPECT_EQ(bundled("qwen2-7b").layer_specs[0].attention.window_tokens, 0);  // use_sliding_window: false
  const ModelSpec gemma2 = bundled("gemma-2-9b");                            // even layers local, odd layers global
  EXPECT_EQ(gemma2.layer_specs[0].attention.window_tokens, 4096);
  EXPECT_EQ(gemma2.layer_specs[1].attention.window_tokens, 0);
  const ModelSpec gemma3 = bundled("gemma-3-27b-it");  // 5 local layers per global layer
  // Its text_config leaves max_position_embeddings out: Gemma3TextConfig's default, 131,072 tokens.
  ASSERT_TRUE(gemma3.max_positions);
  EXPECT_EQ(*gemma3.max_positions, 131072);
  EXPECT_EQ(gemma3.layer_specs[4].attention.window_tokens, 1024);
  EXPECT_EQ(gemma3.layer_specs[5].attention.window_tokens, 0);
  const ModelSpec oss = bundled("gpt-oss-20b");  // layer_types alternate, sliding first
  EXPECT_EQ(oss.layer_specs[0].attention.window_tokens, 128);
  EXPECT_EQ(oss.layer_specs[1].attention.window_tokens, 0);
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

// A bundled config with some keys replaced (`changes` is a JSON object merged over it).
ModelSpec edited(const std::string& id, const std::string& changes) {
  for (const auto& entry : ModelCatalog::bundled().entries())
    if (entry.id == id) {
      Json config = read_json_file(ModelCatalog::bundled().config_path(entry));
      config.merge_patch(Json::parse(changes));
      return model_from_hf_config(config, id + "-edited");
    }
  ADD_FAILURE() << "no bundled model " << id;
  return {};
}

// vLLM keeps NemotronH's SSM state in float32 unless the config's mamba_ssm_cache_dtype says otherwise.
TEST(HfConfig, NemotronSsmStateIsFp32UnlessTheConfigSaysOtherwise) {
  EXPECT_EQ(bundled("nemotron-nano-9b-v2").mamba->ssm_state_dtype, DType::fp32);
  EXPECT_EQ(edited("nemotron-nano-9b-v2", R"({"mamba_ssm_cache_dtype": "bfloat16"})").mamba->ssm_state_dtype,
            DType::bf16);
  EXPECT_THROW(edited("nemotron-nano-9b-v2", R"({"mamba_ssm_cache_dtype": "fp8"})"), Error);
}

TEST(HfConfig, MoeLayersFollowMlpOnlyLayersAndTheSparseStep) {
  // Qwen2-57B-A14B, 28 layers. A MoE FFN: 64 experts x 3 x 3584 x 2560 + shared 3 x 3584 x 20480 + its gate 3584
  // + router 3584 x 64 = 1,982,041,600; a dense one 3 x 3584 x 18944 = 203,685,888; 1,778,355,712 less per layer.
  const ModelSpec all = bundled("qwen2-57b-a14b");
  EXPECT_EQ(all.layers_with(FfnKind::moe), 28);
  const ModelSpec two_dense = edited("qwen2-57b-a14b", R"({"mlp_only_layers": [0, 1]})");
  EXPECT_EQ(two_dense.layer_specs[1].ffn, FfnKind::dense);
  EXPECT_EQ(two_dense.layer_specs[2].ffn, FfnKind::moe);
  EXPECT_DOUBLE_EQ(all.total_params() - two_dense.total_params(), 2 * 1778355712.0);
  const ModelSpec every_other = edited("qwen2-57b-a14b", R"({"decoder_sparse_step": 2})");  // (i + 1) % 2 == 0
  EXPECT_EQ(every_other.layer_specs[0].ffn, FfnKind::dense);
  EXPECT_EQ(every_other.layer_specs[1].ffn, FfnKind::moe);
  EXPECT_EQ(every_other.layers_with(FfnKind::moe), 14);
  // Active: total less 14 layers x (64 - 8) idle experts of 3 x 3584 x 2560 = 27,525,120 weights.
  EXPECT_DOUBLE_EQ(every_other.active_params(), every_other.total_params() - 14.0 * 56 * 27525120);
}

TEST(HfConfig, BadLayerListsNameTheKey) {
  try {
    edited("qwen2-57b-a14b", R"({"mlp_only_layers": [0, 99]})");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("qwen2-57b-a14b-edited: key 'mlp_only_layers' must hold whole numbers from "
                                         "0 to 27, found 99"),
              std::string::npos)
        << e.what();
  }
}

TEST(HfConfig, BadHybridPatternNamesTheKeyAndTheLayer) {
  try {
    edited("nemotron-nano-9b-v2",
           R"({"hybrid_override_pattern": "M-M-M-ME-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-"})");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nemotron-nano-9b-v2-edited: key 'hybrid_override_pattern' has 'E' at "
                                         "layer 7"),
              std::string::npos)
        << e.what();
  }
}

TEST(HfConfig, PerLayerKvHeads) {
  const ModelSpec deci = bundled("decilm-7b");
  EXPECT_EQ(deci.layer_specs[0].attention.kv_heads, 4);
  EXPECT_EQ(deci.layer_specs[5].attention.kv_heads, 2);
  EXPECT_EQ(deci.layer_specs[20].attention.kv_heads, 1);
}

TEST(HfConfig, DtypeDefaultsFromConfig) {
  EXPECT_EQ(bundled("llama-2-7b").default_dtype, DType::fp16);
  EXPECT_TRUE(bundled("llama-2-7b").dtype_from_config);
  EXPECT_FALSE(bundled("bloom-560m").dtype_from_config);  // no torch_dtype: bf16 assumed
}

// A bundled config with `quantization_config` added, as the quantised checkpoint's config.json has it.
ModelSpec with_quantization(const std::string& id, const std::string& quantization_config) {
  for (const auto& entry : ModelCatalog::bundled().entries())
    if (entry.id == id) {
      Json config = read_json_file(ModelCatalog::bundled().config_path(entry));
      config["quantization_config"] = Json::parse(quantization_config);
      return model_from_hf_config(config, id + "-quantised");
    }
  ADD_FAILURE() << "no bundled model " << id;
  return {};
}

std::string quantization_error(const std::string& quantization_config) {
  try {
    with_quantization("llama-3.1-8b", quantization_config);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HfQuantization, UnquantisedCheckpointsUseTorchDtypeForEveryClass) {
  const ModelSpec m = bundled("llama-2-7b");
  EXPECT_EQ(m.default_precision, (Precision{DType::fp16, DType::fp16, DType::fp16}));
  EXPECT_EQ(m.quantization, "");
  EXPECT_EQ(m.precision_for(""), m.default_precision);
  EXPECT_EQ(m.precision_for("w8a16"), (Precision{DType::int8, DType::fp16, DType::fp16}));
}

TEST(HfQuantization, GptOssStoresOnlyItsExpertsInMxfp4) {
  const ModelSpec m = bundled("gpt-oss-120b");
  EXPECT_EQ(m.quantization, "mxfp4");
  EXPECT_EQ(m.default_precision, (Precision{DType::bf16, DType::bf16, DType::bf16, DType::mxfp4}));
  // 36 layers x 128 experts x (3 x 2880^2 weights + 3 x 2880 biases) = 114,701,598,720 expert parameters at 4.25 bits;
  // the other 2,127,555,648 (attention, routers, norms, untied 201088 x 2880 embeddings and LM head) at bf16.
  EXPECT_DOUBLE_EQ(m.total_params(), 116829154368.0);  // 116.8B as published
  EXPECT_DOUBLE_EQ(m.routed_expert_params(), 114701598720.0);
  EXPECT_DOUBLE_EQ(m.weight_bytes(m.default_precision), 114701598720.0 * 0.53125 + 2127555648.0 * 2);  // 65.19 GB
  EXPECT_NEAR(m.weight_bytes(m.precision_for("bf16")), 233.66e9, 0.01e9);
}

TEST(HfQuantization, BlockFp8QuantisesWeightsAndActivations) {
  const ModelSpec m = with_quantization("qwen3-30b-a3b", R"({"activation_scheme": "dynamic", "fmt": "e4m3",
      "quant_method": "fp8", "weight_block_size": [128, 128], "modules_to_not_convert": ["lm_head"]})");
  EXPECT_EQ(m.quantization, "fp8");
  EXPECT_EQ(m.default_precision.to_string(), "wfp8-afp8-kvbf16-blk");
  // Without weight_block_size (or with a null one) the same method scales per tensor.
  const ModelSpec per_tensor = with_quantization("qwen3-30b-a3b", R"({"quant_method": "fp8"})");
  EXPECT_EQ(per_tensor.default_precision, (Precision{DType::fp8, DType::fp8, DType::bf16}));
  const ModelSpec null_block =
      with_quantization("qwen3-30b-a3b", R"({"quant_method": "fp8", "weight_block_size": null})");
  EXPECT_FALSE(null_block.default_precision.block_scaled);
  // Embeddings and LM head stay bf16: 2 x 151936 x 2048; every other weight 1 byte.
  const double heads = 2.0 * 151936 * 2048;
  EXPECT_DOUBLE_EQ(m.weight_bytes(m.default_precision), heads * 2 + (m.total_params() - heads) * 1);
}

TEST(HfQuantization, AwqAndGptqAreWeightOnly) {
  const ModelSpec awq = with_quantization("llama-3.1-8b", R"({"quant_method": "awq", "bits": 4, "group_size": 128,
      "version": "gemm", "zero_point": true})");
  EXPECT_EQ(awq.default_precision, (Precision{DType::int4, DType::bf16, DType::bf16}));
  // 6,979,588,096 non-embedding weights x (0.5 + 2/128) + 1,050,673,152 embedding/LM-head weights x 2 = 5.70 GB
  // (hugging-quants' AWQ-INT4 Llama-3.1-8B checkpoint is 5.73 GB), against 16.06 GB in bf16.
  EXPECT_DOUBLE_EQ(awq.weight_bytes(awq.default_precision), 6979588096.0 * 0.515625 + 1050673152.0 * 2);
  EXPECT_DOUBLE_EQ(awq.weight_bytes(awq.precision_for("bf16")), 16060522496.0);
  const ModelSpec gptq = with_quantization("llama-3.1-8b", R"({"quant_method": "gptq", "bits": 8})");
  EXPECT_EQ(gptq.default_precision, (Precision{DType::int8, DType::bf16, DType::bf16}));
}

TEST(HfQuantization, CompressedTensorsAndBitsandbytes) {
  const ModelSpec fp8 = with_quantization("llama-3.1-8b", R"({"quant_method": "compressed-tensors",
      "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"},
                                     "input_activations": {"num_bits": 8, "type": "float"}}},
      "kv_cache_scheme": {"num_bits": 8, "type": "float"}})");
  EXPECT_EQ(fp8.default_precision, (Precision{DType::fp8, DType::fp8, DType::fp8}));
  const ModelSpec w4 = with_quantization("llama-3.1-8b", R"({"quant_method": "compressed-tensors",
      "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128},
                                     "input_activations": null}}})");
  EXPECT_EQ(w4.default_precision, (Precision{DType::int4, DType::bf16, DType::bf16}));
  const ModelSpec nf4 = with_quantization("llama-3.1-8b", R"({"quant_method": "bitsandbytes", "load_in_4bit": true})");
  EXPECT_EQ(nf4.default_precision, (Precision{DType::int4, DType::bf16, DType::bf16}));
}

TEST(HfQuantization, ModelOptHfQuantConfigBesideTheConfig) {
  using testing_support::write_temp;
  Json config = read_json_file(ModelCatalog::bundled().config_path(ModelCatalog::bundled().entries().front()));
  for (const auto& entry : ModelCatalog::bundled().entries())
    if (entry.id == "llama-3.1-70b") config = read_json_file(ModelCatalog::bundled().config_path(entry));
  const auto path = write_temp("llama-70b-fp8.json", config.dump());
  EXPECT_EQ(hf_quant_config_path(path).filename(), "llama-70b-fp8.hf_quant_config.json");
  EXPECT_EQ(hf_quant_config_path("/x/config.json"), std::filesystem::path("/x/hf_quant_config.json"));
  write_temp("llama-70b-fp8.hf_quant_config.json", R"({"producer": {"name": "modelopt"},
      "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}})");
  const ModelSpec fp8 = read_hf_config(path);
  EXPECT_EQ(fp8.quantization, "modelopt");
  EXPECT_EQ(fp8.default_precision, (Precision{DType::fp8, DType::fp8, DType::fp8}));
  const auto nvfp4 = write_temp("qwen-nvfp4.json", config.dump());
  write_temp("qwen-nvfp4.hf_quant_config.json",
             R"({"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16}})");
  EXPECT_EQ(read_hf_config(nvfp4).default_precision, (Precision{DType::nvfp4, DType::nvfp4, DType::fp8}));
}

TEST(HfQuantization, BundledQuantisedCheckpoints) {
  const ModelSpec qwen_fp8 = bundled("qwen3-30b-a3b-fp8");  // Qwen's block fp8 (weight_block_size 128 x 128)
  EXPECT_EQ(qwen_fp8.default_precision.to_string(), "wfp8-afp8-kvbf16-blk");
  const ModelSpec llama_fp8 = bundled("llama-3.1-70b-instruct-fp8");  // ModelOpt FP8 + FP8 KV cache
  EXPECT_EQ(llama_fp8.quantization, "modelopt");
  EXPECT_EQ(llama_fp8.default_precision, (Precision{DType::fp8, DType::fp8, DType::fp8}));
  const ModelSpec qwen_fp4 = bundled("qwen3-235b-a22b-nvfp4");  // ModelOpt NVFP4, group 16, FP8 KV cache
  EXPECT_EQ(qwen_fp4.default_precision, (Precision{DType::nvfp4, DType::nvfp4, DType::fp8}));
}

TEST(HfQuantization, Qwen3CoderFp8ExcerptIsBlockFp8OfEveryLinearWeight) {
  // The FP8 release's quantization_config (data/models/...-FP8.config-excerpt.json) on the bf16 config.
  const auto& catalog = ModelCatalog::bundled();
  Json excerpt = read_json_file(catalog.config_path(catalog.entries().front()).parent_path() /
                                "Qwen-Qwen3-Coder-480B-A35B-Instruct-FP8.config-excerpt.json");
  const ModelSpec m = with_quantization("qwen3-coder-480b-a35b-instruct", excerpt.at("quantization_config").dump());
  EXPECT_EQ(m.default_precision.to_string(), "wfp8-afp8-kvbf16-blk");
  // Embeddings and LM head bf16 (2 x 151936 x 6144 x 2 bytes), the other 478,287,869,952 weights 1 byte: 482.0 GB.
  EXPECT_DOUBLE_EQ(m.weight_bytes(m.default_precision), 2.0 * 151936 * 6144 * 2 + 478287869952.0);
}

TEST(HfQuantization, BadQuantizationConfigsAreClearErrors) {
  EXPECT_NE(quantization_error(R"({"quant_method": "awq", "bits": 3})").find("'bits' must be 4 or 8"),
            std::string::npos);
  EXPECT_NE(quantization_error(R"({"quant_method": "hqq"})").find("unsupported quant_method 'hqq'"), std::string::npos);
  EXPECT_NE(quantization_error(R"({"bits": 4})").find("missing key 'quant_method'"), std::string::npos);
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

// A bundled config is read once per process: the same object each time (a server resolves it per request), with
// Llama-3.1-8B's published shape (config.json: hidden_size 4096, 32 layers, 8 KV heads).
TEST(ModelCatalog, ABundledConfigIsReadOnce) {
  const ModelCatalog& catalog = ModelCatalog::bundled();
  const ModelEntry* entry = catalog.find("llama-3.1-8b");
  ASSERT_NE(entry, nullptr);
  const ModelSpec& first = catalog.config_of(*entry);
  EXPECT_EQ(&catalog.config_of(*entry), &first);
  EXPECT_EQ(first.hidden, 4096);
  EXPECT_EQ(first.layers, 32);
  EXPECT_EQ(first.max_kv_heads(), 8);
  EXPECT_EQ(catalog.resolve("meta-llama/Llama-3.1-8B").hidden, 4096);
  EXPECT_EQ(catalog.resolve("llama-3.1-8b").id, "llama-3.1-8b");
}

TEST(ModelCatalog, IndexSaysWhetherAConfigIsReconstructed) {
  const auto dir = std::filesystem::path(testing::TempDir()) / "bad-catalog";
  std::filesystem::create_directories(dir);
  testing_support::write_temp("bad-catalog/index.csv", "id,file,hf_repo,config\nx,x.json,org/x,guessed\n");
  try {
    ModelCatalog::load(dir);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index.csv:2: column 'config' must be published or reconstructed, found "
                                         "'guessed'"),
              std::string::npos)
        << e.what();
  }
}

TEST(ModelCatalog, IndexRowsFieldsAndErrors) {
  const auto dir = std::filesystem::path(testing::TempDir()) / "small-catalog";
  std::filesystem::create_directories(dir);
  // a blank line, a trailing comma (no fifth field) and a last line without a newline
  testing_support::write_temp("small-catalog/index.csv",
                              "id,file,hf_repo,config\na,a.json,org/A,published\n\nb,sub/b.json,org/B,reconstructed,");
  const ModelCatalog catalog = ModelCatalog::load(dir);
  ASSERT_EQ(catalog.entries().size(), 2u);
  EXPECT_EQ(catalog.entries()[0].id, "a");
  EXPECT_EQ(catalog.entries()[0].hf_repo, "org/A");
  EXPECT_FALSE(catalog.entries()[0].reconstructed);
  EXPECT_TRUE(catalog.entries()[1].reconstructed);
  EXPECT_EQ(catalog.config_path(catalog.entries()[1]), dir / "sub" / "b.json");
  EXPECT_EQ(catalog.find("ORG/b"), &catalog.entries()[1]);
  testing_support::write_temp("small-catalog/index.csv",
                              "id,file,hf_repo,config\na,a.json,org/A,published\nb,b.json\n");
  try {
    ModelCatalog::load(dir);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index.csv:3: expected 4 fields (id,file,hf_repo,config), found 2"),
              std::string::npos)
        << e.what();
  }
  try {
    ModelCatalog::load(dir / "missing");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index.csv: cannot open model index"), std::string::npos) << e.what();
  }
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
