// The model container: round trip, and every kind of damage is a clear error.
#include <gtest/gtest.h>

#include "core/error.h"
#include "predictor/model_file.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

ModelFile sample_file() {
  ModelFile f;
  f.header = {{"kind", "gnn"}, {"note", "test"}};
  f.tensors["w"] = {{2, 3}, {1, 2, 3, 4, 5, 6}};
  f.tensors["b"] = {{2}, {-1.5f, 0.25f}};
  f.blobs["forest"] = std::string("\x00\x01binary\xff", 9);
  return f;
}

std::string error_of(const std::string& bytes) {
  try {
    parse_model_file(bytes, "m.model");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ModelFile, RoundTripsTensorsBlobsAndHeader) {
  const ModelFile back = parse_model_file(serialize_model_file(sample_file()), "m.model");
  EXPECT_EQ(back.header.at("note"), "test");
  EXPECT_EQ(back.tensors.at("w").shape, (std::vector<long>{2, 3}));
  EXPECT_EQ(back.tensors.at("w").values[5], 6.0f);
  EXPECT_EQ(back.tensors.at("b").values[0], -1.5f);
  EXPECT_EQ(back.blobs.at("forest"), std::string("\x00\x01binary\xff", 9));
}

TEST(ModelFile, FlippedByteIsAChecksumError) {
  std::string bytes = serialize_model_file(sample_file());
  bytes[bytes.size() / 2] ^= 0x20;
  EXPECT_NE(error_of(bytes).find("m.model: checksum mismatch"), std::string::npos) << error_of(bytes);
}

TEST(ModelFile, TruncatedFileIsAnError) {
  const std::string bytes = serialize_model_file(sample_file());
  EXPECT_NE(error_of(bytes.substr(0, bytes.size() - 30)).find("m.model"), std::string::npos);
  EXPECT_NE(error_of(bytes.substr(0, 12)).find("truncated"), std::string::npos);
}

TEST(ModelFile, OtherFilesAndVersionsAreRefused) {
  EXPECT_NE(error_of("{\"kind\": \"gnn\"}").find("not an llmco2 model file"), std::string::npos);
  std::string bytes = serialize_model_file(sample_file());
  bytes[8] = 9;  // format version 9
  EXPECT_NE(error_of(bytes).find("format version 9"), std::string::npos);
}

TEST(ModelFile, ShapeMismatchNamesTheTensor) {
  const ModelFile f = sample_file();
  EXPECT_THROW(expect_tensor(f, "w", {3, 2}, "m.model"), Error);
  EXPECT_THROW(expect_tensor(f, "missing", {1}, "m.model"), Error);
  EXPECT_EQ(expect_tensor(f, "w", {2, 3}, "m.model").values.size(), 6u);
}

}  // namespace
}  // namespace llmco2
