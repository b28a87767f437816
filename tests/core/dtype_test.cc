// Precision specs: names, bit widths per tensor class, the compute type, errors.
#include <gtest/gtest.h>

#include "core/dtype.h"
#include "core/error.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

TEST(Dtype, BytesPerElement) {
  EXPECT_EQ(dtype_bytes(DType::fp32), 4.0);
  EXPECT_EQ(dtype_bytes(DType::bf16), 2.0);
  EXPECT_EQ(dtype_bytes(DType::fp8), 1.0);
  EXPECT_EQ(dtype_bytes(DType::int4), 0.5);
  EXPECT_EQ(dtype_bytes(DType::fp4), 0.5);
  EXPECT_EQ(dtype_bytes(DType::mxfp4), 4.25 / 8);  // 4-bit values + an 8-bit scale per 32
  EXPECT_EQ(dtype_bytes(DType::nvfp4), 4.5 / 8);   // 4-bit values + an 8-bit scale per 16
}

TEST(Dtype, BlockFormatsRunOnFp4Units) {
  EXPECT_EQ(tensor_dtype(DType::mxfp4), DType::fp4);
  EXPECT_EQ(tensor_dtype(DType::nvfp4), DType::fp4);
  EXPECT_EQ(tensor_dtype(DType::fp8), DType::fp8);
  EXPECT_EQ(parse_dtype("mxfp4"), DType::mxfp4);
}

TEST(Precision, WeightOnlyIntegersCarryGroupScales) {
  // w4a16 (AWQ/GPTQ): 0.5 byte + one 2-byte scale per 128 weights = 0.5 + 1/64
  EXPECT_DOUBLE_EQ(parse_precision("w4a16", DType::bf16).weight_bytes_per_element(), 0.515625);
  EXPECT_DOUBLE_EQ(parse_precision("w8a16", DType::bf16).weight_bytes_per_element(), 1.015625);
  // w8a8 (per-channel scales) and fp8 (per-tensor or 128x128 block scales): negligible
  EXPECT_DOUBLE_EQ(parse_precision("w8a8", DType::bf16).weight_bytes_per_element(), 1.0);
  EXPECT_DOUBLE_EQ(parse_precision("fp8", DType::bf16).weight_bytes_per_element(), 1.0);
  EXPECT_DOUBLE_EQ(parse_precision("bf16", DType::bf16).weight_bytes_per_element(), 2.0);
}

TEST(Precision, ExpertsCanBeStoredApart) {
  const Precision oss{DType::bf16, DType::bf16, DType::bf16, DType::mxfp4};  // gpt-oss's checkpoint
  EXPECT_DOUBLE_EQ(oss.weight_bytes_per_element(), 2.0);
  EXPECT_DOUBLE_EQ(oss.expert_bytes_per_element(), 0.53125);
  EXPECT_EQ(oss.compute_dtype(), DType::bf16);
  EXPECT_EQ(oss.to_string(), "wbf16-moemxfp4-abf16-kvbf16");
}

TEST(Precision, UnquantisedTensorsStay16Bit) {
  EXPECT_EQ(parse_precision("w4a16", DType::fp16).unquantised_dtype(), DType::fp16);
  EXPECT_EQ(parse_precision("fp8", DType::bf16).unquantised_dtype(), DType::bf16);
  EXPECT_EQ(parse_precision("fp32", DType::bf16).unquantised_dtype(), DType::fp32);
}

// w8a8 checkpoints quantise each GEMM's input just before it: between kernels the activations stay in the 16-bit
// type, and attention runs in 16 bits unless the KV cache is narrow too.
TEST(Precision, W8a8ActivationsAre16BitBetweenKernels) {
  const Precision fp8_weights = parse_precision("wfp8afp8kvbf16", DType::bf16);
  EXPECT_EQ(fp8_weights.stored_activation_dtype(), DType::bf16);
  EXPECT_EQ(fp8_weights.attention_dtype(), DType::bf16);
  const Precision all_fp8 = parse_precision("wfp8afp8kvfp8", DType::bf16);
  EXPECT_EQ(all_fp8.stored_activation_dtype(), DType::bf16);
  EXPECT_EQ(all_fp8.attention_dtype(), DType::fp8);  // FlashAttention-3's fp8 path: queries and cache in fp8
  const Precision kv8 = parse_precision("w16a16kv8", DType::fp16);
  EXPECT_EQ(kv8.stored_activation_dtype(), DType::fp16);
  EXPECT_EQ(kv8.attention_dtype(), DType::fp16);  // an int8 cache is dequantised into 16-bit attention
  EXPECT_EQ(parse_precision("w8a8", DType::bf16).attention_dtype(), DType::bf16);  // int8 queries and cache: 16-bit
  EXPECT_EQ(parse_precision("fp32", DType::bf16).attention_dtype(), DType::fp32);
}

TEST(Precision, PrintedSpecsParseBack) {
  const Precision cases[] = {
      {DType::bf16, DType::bf16, DType::bf16},
      {DType::int8, DType::bf16, DType::fp8},
      {DType::int4, DType::fp16, DType::fp16},
      {DType::fp8, DType::fp8, DType::bf16},
      {DType::nvfp4, DType::nvfp4, DType::fp8},
      {DType::bf16, DType::bf16, DType::bf16, DType::mxfp4},
      {DType::fp8, DType::fp8, DType::fp8, DType::mxfp4},
  };
  for (const Precision& p : cases) EXPECT_EQ(parse_precision(p.to_string(), DType::fp16), p) << p.to_string();
  EXPECT_EQ(parse_precision("w16-moe4-a16", DType::bf16),
            (Precision{DType::bf16, DType::bf16, DType::bf16, DType::int4}));
}

// "blk" marks block-scaled 1-byte GEMMs (DeepSeek's and Qwen's fp8 checkpoints); it prints and parses back, even when
// every class is fp8, and needs 1-byte weights and activations.
TEST(Precision, BlockScalingIsItsOwnPart) {
  Precision p{DType::fp8, DType::fp8, DType::bf16};
  p.block_scaled = true;
  EXPECT_EQ(p.to_string(), "wfp8-afp8-kvbf16-blk");
  EXPECT_EQ(parse_precision("wfp8-afp8-kvbf16-blk", DType::bf16), p);
  EXPECT_NE(parse_precision("wfp8afp8kvbf16", DType::bf16), p);
  Precision all{DType::fp8, DType::fp8, DType::fp8};
  all.block_scaled = true;
  EXPECT_EQ(parse_precision(all.to_string(), DType::bf16), all);
  EXPECT_THROW(parse_precision("wbf16-abf16-blk", DType::bf16), Error);
  EXPECT_THROW(parse_precision("wint4-abf16-blk", DType::bf16), Error);
  EXPECT_THROW(parse_precision("wbf16-moefp8-afp8-blk", DType::bf16), Error);  // the dense weights are 16-bit
}

// A --dtype naming a block-scaled checkpoint's own types keeps its block scales; other types drop them.
TEST(Precision, ASpecOfTheCheckpointsOwnTypesKeepsItsBlockScales) {
  Precision checkpoint{DType::fp8, DType::fp8, DType::bf16};
  checkpoint.block_scaled = true;
  EXPECT_TRUE(precision_or_default("wfp8afp8kvbf16", checkpoint, DType::bf16).block_scaled);
  EXPECT_TRUE(precision_or_default("fp8", checkpoint, DType::bf16).block_scaled);  // fp8 KV cache too
  EXPECT_FALSE(precision_or_default("w8a16", checkpoint, DType::bf16).block_scaled);
  EXPECT_FALSE(precision_or_default("bf16", checkpoint, DType::bf16).block_scaled);
}

TEST(Precision, ModelDefaultUnlessASpecIsGiven) {
  const Precision fp8{DType::fp8, DType::fp8, DType::bf16};
  EXPECT_EQ(precision_or_default("", fp8, DType::bf16), fp8);
  EXPECT_EQ(precision_or_default("w8a16", fp8, DType::bf16), (Precision{DType::int8, DType::bf16, DType::bf16}));
}

TEST(Precision, SingleNameSetsAllClasses) {
  const Precision p = parse_precision("fp16", DType::bf16);
  EXPECT_EQ(p, (Precision{DType::fp16, DType::fp16, DType::fp16}));
}

// A narrow single name sets the weights (and the activations where the format has them), never the KV cache: vLLM's
// --quantization fp8 keeps a 16-bit cache unless --kv-cache-dtype fp8 is given; AWQ/GPTQ int4 and gpt-oss's MXFP4
// are weight-only.
TEST(Precision, NarrowSingleNamesLeaveTheKvCacheSixteenBit) {
  EXPECT_EQ(parse_precision("fp8", DType::bf16), (Precision{DType::fp8, DType::fp8, DType::bf16}));
  EXPECT_EQ(parse_precision("int8", DType::fp16), (Precision{DType::int8, DType::int8, DType::fp16}));
  EXPECT_EQ(parse_precision("nvfp4", DType::bf16), (Precision{DType::nvfp4, DType::nvfp4, DType::bf16}));
  EXPECT_EQ(parse_precision("int4", DType::bf16), (Precision{DType::int4, DType::bf16, DType::bf16}));
  EXPECT_EQ(parse_precision("mxfp4", DType::bf16), (Precision{DType::mxfp4, DType::bf16, DType::bf16}));
  // Per class: the cache changes only when named.
  EXPECT_EQ(parse_precision("w8a8", DType::bf16), (Precision{DType::int8, DType::int8, DType::bf16}));
  EXPECT_EQ(parse_precision("w8a8kv8", DType::bf16), (Precision{DType::int8, DType::int8, DType::int8}));
  EXPECT_EQ(parse_precision("wfp8-afp8", DType::bf16), (Precision{DType::fp8, DType::fp8, DType::bf16}));
  EXPECT_EQ(parse_precision("wfp8-afp8-kvfp8", DType::bf16), (Precision{DType::fp8, DType::fp8, DType::fp8}));
  // The canonical text reads back to the same precision.
  for (const char* spec : {"fp8", "int4", "w8a8kv8", "bf16", "wfp8-afp8-kvfp8-blk"})
    EXPECT_EQ(parse_precision(parse_precision(spec, DType::bf16).to_string(), DType::bf16),
              parse_precision(spec, DType::bf16))
        << spec;
}

TEST(Precision, NamesAreCaseInsensitive) {
  EXPECT_EQ(parse_precision("FP8", DType::bf16), parse_precision("fp8", DType::bf16));
  EXPECT_EQ(parse_precision("W8A16KV16", DType::bf16), parse_precision("w8a16kv16", DType::bf16));
  EXPECT_EQ(parse_precision("BF16", DType::fp16), (Precision{DType::bf16, DType::bf16, DType::bf16}));
}

TEST(Precision, BitWidthsPerClassUseTheConfigs16BitType) {
  const Precision p = parse_precision("w8a16kv16", DType::bf16);
  EXPECT_EQ(p, (Precision{DType::int8, DType::bf16, DType::bf16}));
  EXPECT_EQ(parse_precision("w4a16", DType::fp16), (Precision{DType::int4, DType::fp16, DType::fp16}));
}

TEST(Precision, NamesPerClass) {
  EXPECT_EQ(parse_precision("wfp8afp8kvfp8", DType::bf16), (Precision{DType::fp8, DType::fp8, DType::fp8}));
  EXPECT_EQ(parse_precision("wint8abf16kvfp8", DType::fp16), (Precision{DType::int8, DType::bf16, DType::fp8}));
}

TEST(Precision, ComputeTypeIsTheWiderOfWeightsAndActivations) {
  EXPECT_EQ((Precision{DType::int4, DType::bf16, DType::bf16}.compute_dtype()), DType::bf16);
  EXPECT_EQ((Precision{DType::int8, DType::int8, DType::bf16}.compute_dtype()), DType::int8);
  EXPECT_EQ((Precision{DType::fp8, DType::fp8, DType::fp8}.compute_dtype()), DType::fp8);
}

TEST(Precision, BadSpecsNameTheSpec) {
  try {
    parse_precision("w7a16", DType::bf16);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'w7a16'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_precision("float64", DType::bf16), Error);
  EXPECT_THROW(parse_precision("", DType::bf16), Error);
  EXPECT_THROW(parse_precision("wbf16-kvfp8", DType::bf16), Error);     // no activations
  EXPECT_THROW(parse_precision("wbf16-abf16-x4", DType::bf16), Error);  // unknown class
}

}  // namespace
}  // namespace llmco2
