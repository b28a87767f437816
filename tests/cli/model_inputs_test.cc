// --model beyond bundled ids: a bare config.json path, a Hugging Face snapshot folder (quantisation read from its
// hf_quant_config.json), a name that is both a bundled id and a path, and a folder without config.json.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/run_cli.h"

namespace {

namespace fs = std::filesystem;
using llmco2::testing_support::Result;

const std::string kTokens = " --gpu h100-sxm --batch 1 --prompt 1024 --gen 128 --format json";

// A fresh folder in the test's temporary directory; commands run with it as the working directory.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(testing::TempDir()) / (name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void copy_bundled(const std::string& file, const fs::path& to) {
  fs::copy_file(fs::path(LLMCO2_DATA) / "models" / file, to, fs::copy_options::overwrite_existing);
}

Result graph_in(const fs::path& dir, const std::string& model, const std::string& extra = "") {
  return llmco2::testing_support::run_llmco2("graph --model " + model + kTokens + extra, "cd " + dir.string() + " &&");
}

int layers(const Result& r) { return nlohmann::json::parse(r.out)["layers"].get<int>(); }

// Llama-3.1-8B's config: 32 layers, hidden size 4096, so q_proj in prefill is 2 x 1024 x 4096 x 4096 operations.
TEST(ModelInputs, BareConfigJsonPathWorks) {
  const fs::path dir = fresh_dir("bare_config");
  copy_bundled("meta-llama-Llama-3.1-8B.json", dir / "config.json");
  const Result r = graph_in(dir, "config.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["layers"], 32);
  EXPECT_EQ(j["phases"]["prefill"]["nodes"][1]["ops"].get<double>(), 2.0 * 1024 * 4096 * 4096);
}

// nvidia/Llama-3.1-70B-Instruct-FP8: 80 layers; its config.json carries no quantization_config, the FP8 weights and
// KV cache are declared only in hf_quant_config.json ("quant_algo": "FP8", "kv_cache_quant_algo": "FP8").
TEST(ModelInputs, SnapshotFolderReadsItsQuantisationFile) {
  const fs::path dir = fresh_dir("snapshot");
  fs::create_directories(dir / "my-70b-fp8");
  copy_bundled("nvidia-Llama-3.1-70B-Instruct-FP8.json", dir / "my-70b-fp8" / "config.json");
  const Result plain = graph_in(dir, "my-70b-fp8", " --gpus 4");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(layers(plain), 80);
  const auto plain_dtype = nlohmann::json::parse(plain.out)["request"]["dtype"];
  EXPECT_EQ(plain_dtype["weights"], "bf16");  // the config's torch_dtype
  EXPECT_EQ(plain_dtype["kv_cache"], "bf16");
  copy_bundled("nvidia-Llama-3.1-70B-Instruct-FP8.hf_quant_config.json", dir / "my-70b-fp8" / "hf_quant_config.json");
  const Result quantised = graph_in(dir, "my-70b-fp8/", " --gpus 4");
  ASSERT_EQ(quantised.exit_code, 0) << quantised.err;
  const auto dtype = nlohmann::json::parse(quantised.out)["request"]["dtype"];
  EXPECT_EQ(dtype["weights"], "fp8");
  EXPECT_EQ(dtype["activations"], "fp8");
  EXPECT_EQ(dtype["kv_cache"], "fp8");
}

// A folder named like a bundled id, holding Gemma-2-9B's config (42 layers): the bare name is the bundled
// Llama-3.1-8B (32 layers) with one note saying how to name the folder; ./name is the folder.
TEST(ModelInputs, BundledIdThatIsAlsoAPathTakesTheBundledModelWithANote) {
  const fs::path dir = fresh_dir("ambiguous");
  fs::create_directories(dir / "llama-3.1-8b");
  copy_bundled("google-gemma-2-9b.json", dir / "llama-3.1-8b" / "config.json");
  const Result bundled = graph_in(dir, "llama-3.1-8b");
  ASSERT_EQ(bundled.exit_code, 0) << bundled.err;
  EXPECT_EQ(layers(bundled), 32);
  EXPECT_EQ(std::count(bundled.err.begin(), bundled.err.end(), '\n'), 1) << bundled.err;
  EXPECT_NE(bundled.err.find("used the bundled model (write ./llama-3.1-8b for the path)"), std::string::npos)
      << bundled.err;
  const Result folder = graph_in(dir, "./llama-3.1-8b");
  ASSERT_EQ(folder.exit_code, 0) << folder.err;
  EXPECT_EQ(layers(folder), 42);
  EXPECT_TRUE(folder.err.empty()) << folder.err;
}

TEST(ModelInputs, FolderWithoutConfigIsOneLineAndExitCode2) {
  const fs::path dir = fresh_dir("no_config");
  fs::create_directories(dir / "empty-snapshot");
  const Result r = graph_in(dir, "empty-snapshot");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("empty-snapshot: a model folder needs a config.json"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
