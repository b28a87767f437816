// Tensor-core paths: the precision an engine runs on each GPU, and the note saying why it differs.
#include <gtest/gtest.h>

#include "hardware/gpu_catalog.h"
#include "support/all_modules.h"
#include "support/catalogs.h"

namespace llmco2 {
namespace {

using testing_support::gpu;

TEST(EnginePrecision, Fp8RunsNativelyWhereTheGpuHasFp8TensorCores) {
  const Precision fp8{DType::fp8, DType::fp8, DType::bf16};
  for (const char* id : {"h100-sxm", "l40s", "l4", "mi300x", "b200"}) {
    const EnginePrecision e = gpu(id).engine_precision(fp8);
    EXPECT_EQ(e.precision, fp8) << id;
    EXPECT_TRUE(e.notes.empty()) << id;
  }
}

TEST(EnginePrecision, Fp8OnAnA100FallsBackToWeightOnlyW8a16) {
  const Gpu a100 = gpu("a100-80gb-sxm");
  EXPECT_FALSE(a100.has_tensor_units(DType::fp8));
  const EnginePrecision e = a100.engine_precision({DType::fp8, DType::fp8, DType::fp8});
  // 1-byte fp8 weights streamed, bf16 activations and compute; the fp8 KV cache stays (vLLM supports it on Ampere).
  EXPECT_EQ(e.precision, (Precision{DType::fp8, DType::bf16, DType::fp8}));
  EXPECT_EQ(e.precision.compute_dtype(), DType::bf16);
  EXPECT_DOUBLE_EQ(e.precision.weight_bytes_per_element(), 1.0);
  ASSERT_EQ(e.notes.size(), 1u);
  EXPECT_NE(e.notes[0].find("a100-80gb-sxm has no fp8 tensor cores"), std::string::npos) << e.notes[0];
  EXPECT_NE(e.notes[0].find("weight-only"), std::string::npos) << e.notes[0];
}

TEST(EnginePrecision, Fp4OnlyWhereTheGpuHasIt) {
  // No bundled GPU lists fp4 tensor cores yet: NVFP4 weights run weight-only (w4a16) on an H100.
  const Gpu h100 = gpu("h100-sxm");
  const EnginePrecision e = h100.engine_precision({DType::nvfp4, DType::nvfp4, DType::fp8});
  EXPECT_EQ(e.precision, (Precision{DType::nvfp4, DType::bf16, DType::fp8}));
  ASSERT_EQ(e.notes.size(), 1u);
  EXPECT_NE(e.notes[0].find("no fp4 tensor cores"), std::string::npos) << e.notes[0];
  Gpu blackwell = gpu("b200");
  blackwell.dense_peak_ops_per_s[DType::fp4] = 9000e12;
  EXPECT_TRUE(blackwell.has_tensor_units(DType::nvfp4));
  EXPECT_TRUE(blackwell.engine_precision({DType::nvfp4, DType::nvfp4, DType::fp8}).notes.empty());
  EXPECT_DOUBLE_EQ(blackwell.matrix_peak(DType::mxfp4).ops_per_s, 9000e12);
}

TEST(EnginePrecision, Mxfp4ExpertsAreWeightOnlyAlready) {
  const Precision oss{DType::bf16, DType::bf16, DType::bf16, DType::mxfp4};
  const EnginePrecision e = gpu("h100-sxm").engine_precision(oss);
  EXPECT_EQ(e.precision, oss);
  EXPECT_TRUE(e.notes.empty());
}

TEST(EnginePrecision, PyTorchEagerKeepsBf16OnAV100AndRunsItOnTheCudaCores) {
  const Gpu v100 = gpu("v100-sxm2");
  const Precision bf16{DType::bf16, DType::bf16, DType::bf16};
  const EnginePrecision kept = v100.engine_precision(bf16, /*casts_bf16_to_fp16=*/false);
  EXPECT_EQ(kept.precision, bf16);
  ASSERT_EQ(kept.notes.size(), 1u);
  EXPECT_NE(kept.notes[0].find("CUDA cores"), std::string::npos) << kept.notes[0];
  // bf16 cannot enter Volta's fp16 tensor cores: the V100 datasheet's fp32 rate, 15.7 TFLOP/s, not 125.
  const ComputePeak peak = v100.matrix_peak(DType::bf16);
  EXPECT_EQ(peak.dtype, DType::fp32);
  EXPECT_DOUBLE_EQ(peak.ops_per_s, 15.7e12);
  // An engine that casts (vLLM) runs fp16 on the tensor cores instead.
  EXPECT_EQ(v100.engine_precision(bf16, true).precision, (Precision{DType::fp16, DType::fp16, DType::fp16}));
}

TEST(EnginePrecision, Bf16BecomesFp16WithoutBf16TensorCores) {
  const EnginePrecision e = gpu("t4").engine_precision({DType::bf16, DType::bf16, DType::bf16});
  EXPECT_EQ(e.precision, (Precision{DType::fp16, DType::fp16, DType::fp16}));
  ASSERT_EQ(e.notes.size(), 1u);
  EXPECT_NE(e.notes[0].find("t4 has no bf16"), std::string::npos);
  // int8 W8A8 on a V100 (no int8 tensor cores): int8 weights dequantised to fp16.
  const EnginePrecision v100 = gpu("v100-sxm2").engine_precision({DType::int8, DType::int8, DType::fp16});
  EXPECT_EQ(v100.precision, (Precision{DType::int8, DType::fp16, DType::fp16}));
}

TEST(EnginePrecision, Int8OnBlackwellUltraRunsWeightOnly) {
  // Blackwell Ultra lists INT8 at 307 TOPS sparse (153.5 dense), a fifteenth of its bf16 rate, so the catalog leaves
  // int8 null (data/gpus/b300.json): an int8 w8a8 checkpoint runs weight-only, its matmuls in bf16.
  const Gpu b300 = gpu("b300");
  EXPECT_FALSE(b300.has_tensor_units(DType::int8));
  const EnginePrecision e = b300.engine_precision({DType::int8, DType::int8, DType::bf16});
  EXPECT_EQ(e.precision, (Precision{DType::int8, DType::bf16, DType::bf16}));
  ASSERT_EQ(e.notes.size(), 1u);
  EXPECT_NE(e.notes[0].find("b300 has no int8 tensor cores"), std::string::npos) << e.notes[0];
  EXPECT_NE(e.notes[0].find("weight-only"), std::string::npos) << e.notes[0];
  const ComputePeak peak = b300.matrix_peak(DType::int8);  // the fastest 16-bit units (fp16 where bf16 is equal)
  EXPECT_EQ(peak.dtype, DType::fp16);
  EXPECT_DOUBLE_EQ(peak.ops_per_s, 2250e12);
  // The B200 keeps its int8 tensor rate (4,500 TOPS dense); fp8 and NVFP4 run natively on Blackwell Ultra.
  EXPECT_DOUBLE_EQ(gpu("b200").matrix_peak(DType::int8).ops_per_s, 4500e12);
  EXPECT_TRUE(gpu("gb300").engine_precision({DType::nvfp4, DType::nvfp4, DType::fp8}).notes.empty());
  EXPECT_TRUE(b300.engine_precision({DType::fp8, DType::fp8, DType::fp8}).notes.empty());
}

}  // namespace
}  // namespace llmco2
