// Precision specs: names, bit widths per tensor class, the compute type, errors.
#include <gtest/gtest.h>

#include "core/dtype.h"
#include "core/error.h"

namespace llmco2 {
namespace {

TEST(Dtype, BytesPerElement) {
  EXPECT_EQ(dtype_bytes(DType::fp32), 4.0);
  EXPECT_EQ(dtype_bytes(DType::bf16), 2.0);
  EXPECT_EQ(dtype_bytes(DType::fp8), 1.0);
  EXPECT_EQ(dtype_bytes(DType::int4), 0.5);
}

TEST(Precision, SingleNameSetsAllClasses) {
  const Precision p = parse_precision("fp16", DType::bf16);
  EXPECT_EQ(p, (Precision{DType::fp16, DType::fp16, DType::fp16}));
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
}

}  // namespace
}  // namespace llmco2
