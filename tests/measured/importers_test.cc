// Tests of each importer on small fixture files copied from ../shared/data/measured (tests/testdata/measured):
// converted values worked out by hand from the fixture rows and each source's SOURCE.md.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/json_io.h"
#include "core/paths.h"
#include "dataset/dataset_csv.h"
#include "hardware/gpu_catalog.h"
#include "measured/bench_results.h"
#include "measured/importer.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

const std::filesystem::path kFixtures = std::filesystem::path(LLMCO2_TESTDATA) / "measured";

ImportResult run(const std::string& id) {
  const Importer& importer = find_importer(id);
  return importer.run(kFixtures / importer.folder);
}

bool has(const DatasetRow& row, const char* caveat) { return row.has_caveat(caveat); }

TEST(Importers, MlEnergyV1KeepsPerResponseEnergyAtBatch1AndScalesTheBatchSweep) {
  const ImportResult r = run("mlenergy-v1");
  ASSERT_EQ(r.rows.size(), 3u);
  // final_bs1/A100_chat line 4: FastChat-T5 is an encoder-decoder, an architecture llmco2 does not represent.
  ASSERT_EQ(r.rejects.size(), 1u);
  EXPECT_EQ(r.rejects[0].line, 4);
  EXPECT_EQ(r.rejects[0].reason, "out of scope: encoder-decoder/RNN (T5 encoder-decoder)");
  const DatasetRow& koala7 = r.rows[1];  // final_bs1/A100_chat line 3 (a40_batch_sweep is read after final_bs1)
  EXPECT_EQ(koala7.model, "llama-2-7b");
  EXPECT_EQ(koala7.model_relation, "same-architecture");
  EXPECT_TRUE(has(koala7, "model_substituted"));
  EXPECT_EQ(koala7.gpu, "a100-40gb-sxm");
  EXPECT_TRUE(has(koala7, "gpu_variant_assumed"));
  EXPECT_EQ(koala7.measures, Measures::isolated);
  EXPECT_DOUBLE_EQ(*koala7.energy_j.total, 1345.554839153794);
  EXPECT_DOUBLE_EQ(koala7.prompt_tokens, (8 + 16) / 2.0 / 4.0);  // fixture prompts of 8 and 16 characters
  const DatasetRow& vicuna = r.rows[2];                          // A40 batch 4: the source stores energy per request
  EXPECT_EQ(vicuna.gpu, "a40");
  EXPECT_EQ(vicuna.measures, Measures::fixed_batch);
  EXPECT_DOUBLE_EQ(*vicuna.energy_j.total, 905.0992419354778 * 4);
  EXPECT_DOUBLE_EQ(*vicuna.latency_s.total, 25.87752078999064);
}

TEST(Importers, MlEnergyV2IsSteadyStateEnergyForTheMeanBatch) {
  const ImportResult r = run("mlenergy-v2");
  ASSERT_EQ(r.rows.size(), 2u);
  ASSERT_EQ(r.rejects.size(), 0u);
  // TP 8 x PP 2 over two 8-GPU instances: 16 GPUs; each of the 2 virtual engines capped at the file's batch 1024, so
  // "Max BS" is 2,048 and "Avg BS" counts both engines' running requests. Never fitted (validated apart).
  const DatasetRow& staged = r.rows[1];
  EXPECT_EQ(staged.model, "mixtral-8x22b");
  EXPECT_EQ(staged.gpus, 16);
  EXPECT_EQ(staged.tensor_parallel, 8);
  EXPECT_EQ(staged.pipeline_parallel, 2);
  EXPECT_EQ(staged.interconnect, "nvlink3");  // each stage's 8 GPUs (the stages talk over the nodes' network)
  EXPECT_DOUBLE_EQ(staged.batch, 1993.9225061830173);
  EXPECT_DOUBLE_EQ(*staged.max_batch, 2048);
  EXPECT_NE(staged.why_not_a_label().find("pipeline stages: held out of every fit"), std::string::npos);
  const DatasetRow& g = r.rows[0];
  EXPECT_EQ(g.pipeline_parallel, 1);
  EXPECT_EQ(g.model, "gemma-2-27b");
  EXPECT_EQ(g.model_relation, "fine-tune");
  EXPECT_EQ(g.gpus, 4);
  EXPECT_EQ(g.interconnect, "nvlink3");
  EXPECT_EQ(g.measures, Measures::steady_state);
  EXPECT_DOUBLE_EQ(g.batch, 127.72361537073786);
  EXPECT_DOUBLE_EQ(*g.max_batch, 128);
  EXPECT_DOUBLE_EQ(*g.energy_j.total, 230.644433524673 * 127.72361537073786);
  // A request's steady-state time in the batch: Avg BS x output tokens / token throughput = 47.7 s (Avg TPOT x 391
  // = 43.9 s also counts the drain's short steps). Energy / latency: 230.6 J x 1,051 tok/s / 392.5 tok = 618 W for
  // the 4 GPUs, 154 W each, between the A100's idle and TDP.
  EXPECT_DOUBLE_EQ(*g.latency_s.total, 127.72361537073786 * 392.47133333333335 / 1051.3354539260472);
  EXPECT_NEAR(*g.energy_j.total / *g.latency_s.total, 230.644433524673 * 1051.3354539260472 / 392.47133333333335, 1e-9);
  EXPECT_FALSE(has(g, "greedy_sampling"));  // chat: the client sends temperature 0.8, top_p 0.95
  EXPECT_FALSE(g.gen_tokens_cv);            // v2 stores no output-length distribution
}

TEST(Importers, MlEnergyV3ReadsExpertParallelRowsAsOneTensorParallelGroup) {
  const ImportResult r = run("mlenergy-v3");
  ASSERT_EQ(r.rows.size(), 3u);
  const DatasetRow& moe = r.rows[1];
  EXPECT_EQ(moe.model, "qwen3-235b-a22b");
  EXPECT_EQ(moe.dtype, "wfp8-afp8-kvbf16-blk");  // Qwen's fp8 checkpoints scale per 128 x 128 block
  EXPECT_EQ(moe.gpus, 8);
  EXPECT_EQ(moe.tensor_parallel, 8);
  EXPECT_EQ(moe.data_parallel, 1);
  EXPECT_DOUBLE_EQ(*moe.energy_j.total, 9984.831726816567 * 7.992145662263478);
  // Latency: a request's time in the running batch by Little's law, avg batch x output length / output throughput.
  EXPECT_DOUBLE_EQ(*moe.latency_s.total, 7.992145662263478 * 876.666015625 / 315.76713318996025);
  // So energy / latency is the source's own mean power of the 8 GPUs (J/token x tokens/s), 450 W each, under the TDP.
  EXPECT_NEAR(*moe.energy_j.total / *moe.latency_s.total, 3596.4456629623637, 1e-6);
  EXPECT_EQ(moe.note("median_itl_ms"), "24.736017920076847");  // for serve-validate's inter-token latency
  EXPECT_DOUBLE_EQ(moe.prompt_tokens, (8 + 16) / 2.0 / 4.0);   // chat: the estimate from the v2 prompt file
  EXPECT_DOUBLE_EQ(r.rows[0].prompt_tokens, 300);              // gpqa: assumed
}

TEST(Importers, MlEnergyV3FlagsRowsOfReconstructedConfigs) {
  const ImportResult r = run("mlenergy-v3");
  ASSERT_EQ(r.rows.size(), 3u);
  const DatasetRow& nemotron = r.rows[2];  // no public config.json: data/models/RECONSTRUCTED.md
  EXPECT_EQ(nemotron.model, "nemotron-nano-9b-v2");
  EXPECT_EQ(nemotron.model_relation, "same");
  EXPECT_TRUE(has(nemotron, "model_reconstructed"));
  EXPECT_NEAR(nemotron.arch.params_b.value_or(0), 8.888227328, 1e-9);
  EXPECT_FALSE(has(r.rows[1], "model_reconstructed"));
}

TEST(Importers, MlEnergyV3TakesTheOutputLengthSpreadFromTheConfigurationsHistogram) {
  const ImportResult r = run("mlenergy-v3");
  ASSERT_EQ(r.rows.size(), 3u);
  // Fixture models/Qwen__Qwen3-14B__gpqa.json, max_num_seqs 8: one output in [0, 100), three in [100, 200). At the
  // bin midpoints the mean is (50 + 3 x 150) / 4 = 125 and the variance (50^2 + 3 x 150^2) / 4 - 125^2 = 1875.
  ASSERT_TRUE(r.rows[0].gen_tokens_cv);
  EXPECT_NEAR(*r.rows[0].gen_tokens_cv, std::sqrt(1875.0) / 125.0, 1e-12);
  EXPECT_FALSE(r.rows[1].gen_tokens_cv);  // no histogram file for that model: no spread claimed
  for (const auto& row : r.rows) EXPECT_TRUE(has(row, "sampling_penalties"));  // repetition_penalty 1.1
}

TEST(Importers, SplitwiseScalesNormalisedPowerByTdpAndInfersEarlyStops) {
  const ImportResult r = run("splitwise");
  ASSERT_EQ(r.rows.size(), 3u);
  const DatasetRow& llama = r.rows[0];
  EXPECT_EQ(llama.model, "llama-2-70b");
  EXPECT_EQ(llama.gpu, "a100-80gb-sxm");
  EXPECT_DOUBLE_EQ(*llama.energy_j.total, 0.73599375 * 400 * 2 * 7.168983697891235);
  EXPECT_DOUBLE_EQ(*llama.latency_s.prefill, 0.1962532191537321);
  EXPECT_DOUBLE_EQ(llama.gen_tokens, 128);  // (7169.0 - 196.3) / 54.88 = 127.1 steps + the prefill token
  EXPECT_EQ(llama.engine, "vllm-0.2");      // not named by the source: vLLM of 2023, before CUDA graphs
  EXPECT_TRUE(has(llama, "engine_assumed"));
  const DatasetRow& bloom = r.rows[1];
  EXPECT_EQ(bloom.model, "bloom-176b");  // SplitwiseSim's name
  EXPECT_EQ(bloom.model_relation, "same");
  EXPECT_DOUBLE_EQ(bloom.gen_tokens, 342);  // (16974.76 - 174.58) / 49.249 = 341.1 steps, not 2048
  EXPECT_TRUE(has(bloom, "gen_tokens_inferred"));
  EXPECT_TRUE(has(bloom, "energy_missing"));
  EXPECT_FALSE(bloom.energy_j.total.has_value());
  EXPECT_TRUE(has(r.rows[2], "power_capped"));
  EXPECT_EQ(r.rows[2].gpu, "h100-sxm");
}

TEST(Importers, WilkinsKeepsRequestRowsAndRejectsStartupRows) {
  const ImportResult r = run("wilkins");
  EXPECT_EQ(r.rows.size(), 10u);    // 2 request rows from each of the 5 files
  EXPECT_EQ(r.rejects.size(), 5u);  // 1 startup row each
  EXPECT_NE(r.rejects[0].reason.find("not a request row"), std::string::npos);
  const DatasetRow& last = r.rows[9];  // independence-test: energy in mJ
  EXPECT_DOUBLE_EQ(*last.energy_j.total, 70.278);
  EXPECT_DOUBLE_EQ(last.gen_tokens, 16);
  EXPECT_DOUBLE_EQ(last.prompt_tokens, 8);
  EXPECT_TRUE(has(last, "no_kv_cache"));
  EXPECT_TRUE(has(last, "gen_tokens_is_limit"));
  for (const auto& row : r.rows)
    if (row.gpus > 1) {
      EXPECT_EQ(row.parallelism, Parallelism::layer_split);
    }
}

TEST(Importers, TokenPowerBenchCountsOnlyTheServingGpu) {
  const ImportResult r = run("tokenpowerbench");
  ASSERT_EQ(r.rows.size(), 1u);
  // Lines 2-3: GPU 1 at 299 and 296 W (serving, not the ~61 W idle): two GPUs ran. Line 4: no per-GPU power.
  ASSERT_EQ(r.rejects.size(), 3u);
  EXPECT_EQ(r.rejects[0].line, 2);
  EXPECT_NE(r.rejects[0].reason.find("GPU 1 drew 299 W"), std::string::npos) << r.rejects[0].reason;
  EXPECT_EQ(r.rejects[1].line, 3);
  EXPECT_EQ(r.rejects[2].line, 4);
  // Line 5: Llama-3.2-3B, batch 128, 128 responses in 1.014 s, GPU 0 at 145.96 W.
  const DatasetRow& d = r.rows[0];
  EXPECT_EQ(d.engine, "vllm");
  EXPECT_DOUBLE_EQ(d.batch, 128);
  EXPECT_DOUBLE_EQ(*d.energy_j.total, 145.95915 * 1.0138213634490967);
  EXPECT_DOUBLE_EQ(*d.run_requests, 128);
  EXPECT_DOUBLE_EQ(d.gen_tokens, 14669.0 / 128);
  EXPECT_TRUE(has(d, "idle_gpus_subtracted"));
  EXPECT_TRUE(has(d, "nvml_window_mean"));
  EXPECT_TRUE(has(d, "short_run"));             // 1 s < 10 s
  EXPECT_TRUE(has(d, "temperature_sampling"));  // SamplingParams(max_tokens, temperature): no top-p sort
  // One generate() per 128 prompts returns when its longest response, at max_tokens 128, ends.
  EXPECT_EQ(d.measures, Measures::fixed_batch);
  EXPECT_TRUE(has(d, "batch_ran_to_cap"));
  EXPECT_EQ(d.note("max_output_tokens"), "128");
  EXPECT_TRUE(has(d, "gen_tokens_estimated"));  // words x 1.3 of the text, the source's own estimate
}

TEST(Importers, ChuyishangTakesTheMeanBatchFromLittlesLaw) {
  const ImportResult r = run("chuyishang");
  ASSERT_EQ(r.rows.size(), 1u);
  const DatasetRow& q = r.rows[0];
  EXPECT_EQ(q.gpu, "a100-80gb-sxm");
  EXPECT_NEAR(q.batch, 4135 * 1.161 / 600, 1e-12);  // = 8.001
  EXPECT_NEAR(*q.energy_j.total, 183155.23 / 4135 * q.batch, 1e-9);
  EXPECT_EQ(q.model, "qwen2.5-3b-instruct");
  EXPECT_EQ(q.model_relation, "same");
  // `--dtype bfloat16` is vLLM's activation type: the row keeps the checkpoint's own precision (empty), so that
  // gpt-oss-20b's MXFP4 experts are not read as bf16 weights (2.1x the fitted time when they were).
  EXPECT_EQ(q.dtype, "");
}

// The fixture: v4.0 DGX H100 llama2-70b-99.9 Server (15,487.46 tokens/s alone, 5,908.76 W), v4.1 H200 llama2-70b-99
// Offline (86.7369 samples/s, 291.25 tokens each, 6,152.98 W) and its -99.9 twin (the same run), v4.1 H200 gptj-99
// Server (169.58 samples/s, 68.999 tokens each, 4,722.56 W at a 350 W GPU limit).
TEST(Importers, MlperfPowerKeepsTheNodesWallEnergyPerSampleAndCountsEachRunOnce) {
  const ImportResult r = run("mlperf-power");
  ASSERT_EQ(r.rows.size(), 3u);
  ASSERT_EQ(r.rejects.size(), 1u);
  EXPECT_NE(r.rejects[0].reason.find("same measurement as the llama2-70b-99 row"), std::string::npos);
  const DatasetRow& h100 = r.rows[0];
  EXPECT_EQ(h100.gpu, "h100-sxm");
  EXPECT_EQ(h100.tensor_parallel, 2);  // NVIDIA's v4.0 config; 70 GB of FP8 weights would fill 87% of one 80 GB GPU
  EXPECT_EQ(h100.data_parallel, 4);
  // tokens/s alone: samples/s = 15,487.46 / 294.45 (the reference tokens per sample); J per token = 5,908.76 /
  // 15,487.46
  EXPECT_NEAR(*h100.latency_s.total, 294.45 / 15487.46, 1e-12);
  EXPECT_NEAR(*h100.energy_j.total / h100.gen_tokens, 5908.76 / 15487.46, 1e-9);
  EXPECT_NE(h100.notes.find("node dgx-h100"), std::string::npos);
  EXPECT_NE(h100.notes.find("power_cap_w 450"), std::string::npos);  // MaxQ, from its config (not in the CSV)
  const DatasetRow& h200 = r.rows[1];
  EXPECT_NEAR(*h200.energy_j.total, 6152.9844351733 / 86.7369, 1e-9);  // 70.94 J per sample at the wall
  EXPECT_DOUBLE_EQ(h200.gen_tokens, 291.25);
  EXPECT_EQ(h200.tensor_parallel, 1);
  EXPECT_DOUBLE_EQ(*h200.max_batch, 806 * 8);  // 806 per engine (NVIDIA's v4.1 config), 8 engines
  for (const char* caveat : {"node_wall_power", "throughput_row", "prompt_tokens_estimated", "power_capped"})
    EXPECT_TRUE(has(h200, caveat)) << caveat;
}

TEST(Importers, MlperfGptjRunsImportWithTheirFourBeams) {
  const ImportResult r = run("mlperf-power");
  ASSERT_EQ(r.rows.size(), 3u);
  const DatasetRow& gptj = r.rows[2];
  EXPECT_EQ(gptj.model, "gpt-j-6b");
  EXPECT_EQ(gptj.model_relation, "fine-tune");  // MLCommons' CNN/DailyMail fine-tune of EleutherAI/gpt-j-6b
  EXPECT_NEAR(*gptj.energy_j.total, 4722.5611727417 / 169.58, 1e-9);  // 27.85 J per sample at the wall
  EXPECT_DOUBLE_EQ(gptj.gen_tokens, 68.999);
  EXPECT_DOUBLE_EQ(gptj.prompt_tokens, 960);   // half the 1,919-token cut of the prompts (estimated)
  EXPECT_DOUBLE_EQ(*gptj.max_batch, 396 * 8);  // 396 requests per engine (NVIDIA's v4.1 config), 8 engines
  EXPECT_EQ(gptj.note("beams"), "4");          // beam search, beam width 4 (the reference and NVIDIA's engine)
  EXPECT_EQ(gptj.note("power_cap_w"), "350");
  EXPECT_TRUE(has(gptj, "prompt_tokens_estimated"));
  EXPECT_EQ(r.rows[1].note("beams"), "");  // llama2-70b decodes greedily
}

// The fixture: v4.1 8xMI300X llama2-70b-99.9 Offline (23,514.8 tokens/s, 80.15 samples/s) and its -99 twin (the same
// figures), v5.1 16xMI300X (two 8-GPU nodes) llama2-70b-99.9 Server (47,561.71 tokens/s, 158.04 samples/s, mean TPOT
// 120.82 ms), a v5.1 system of MI325X and MI300X nodes, v5.1 8xMI325X mixtral-8x7b Server (55,800.33 tokens/s,
// 387.96 samples/s) and AMD's v5.1 8xMI325X llama2-70b-99.9 Interactive (61.24 samples/s, mean TPOT 35.27 ms).
TEST(Importers, MlperfAmdKeepsOneNodesTimePerSampleAndCountsEachRunOnce) {
  const ImportResult r = run("mlperf-amd");
  ASSERT_EQ(r.rows.size(), 4u);
  ASSERT_EQ(r.rejects.size(), 2u);
  EXPECT_NE(r.rejects[0].reason.find("the same run as the system's -99.9 row"), std::string::npos);
  EXPECT_NE(r.rejects[1].reason.find("mixes GPU models"), std::string::npos);
  const DatasetRow& offline = r.rows[0];
  EXPECT_EQ(offline.gpu, "mi300x");
  EXPECT_EQ(offline.model, "llama-2-70b");
  EXPECT_EQ(offline.engine, "vllm-v0-llm");  // vLLM 0.4.3's V0 engine in the harness's process
  EXPECT_EQ(offline.dtype, "wfp8afp8kvfp8");
  EXPECT_DOUBLE_EQ(*offline.max_batch, 2048 * 8);  // max_num_seqs 2048 (mainVllmFp8_Offline.py), 8 engines
  EXPECT_EQ(offline.note("max_tokens"), "65536");
  EXPECT_EQ(offline.gpus, 8);
  EXPECT_EQ(offline.tensor_parallel, 1);  // TP=1 DP=8: closed/AMD/code/llama2-70b-99.9/test_VllmFp8 scripts
  EXPECT_EQ(offline.data_parallel, 8);
  EXPECT_NEAR(*offline.latency_s.total, 1 / 80.15, 1e-12);
  EXPECT_NEAR(offline.gen_tokens, 23514.8 / 80.15, 1e-9);  // 293.4 tokens per sample
  EXPECT_FALSE(offline.energy_j.total);
  for (const char* caveat : {"throughput_row", "prompt_tokens_estimated", "energy_missing"})
    EXPECT_TRUE(has(offline, caveat)) << caveat;
  EXPECT_EQ(offline.note("node"), "mi300x-platform");
  EXPECT_EQ(offline.note("mean_tpot_ms"), "");      // Offline reports no latency
  EXPECT_FALSE(offline.why_not_a_label().empty());  // node-scope throughput: never a GPU-scope label
  const DatasetRow& server = r.rows[1];
  EXPECT_NEAR(*server.latency_s.total, 2 / 158.04, 1e-12);  // one node's time per sample: 2 nodes ran 158.04/s
  EXPECT_EQ(server.note("nodes"), "2");
  EXPECT_EQ(server.note("mean_tpot_ms"), "120.82");
  EXPECT_EQ(server.note("scenario"), "Server");
  EXPECT_TRUE(has(server, "run_settings_unknown"));  // MangoBoost's LLMBoost publishes no engine settings
  EXPECT_FALSE(server.max_batch);
  const DatasetRow& mixtral = r.rows[2];
  EXPECT_EQ(mixtral.gpu, "mi325x");
  EXPECT_EQ(mixtral.model, "mixtral-8x7b");
  EXPECT_EQ(mixtral.note("node"), "quanta-d74a-7u-mi325x");
  EXPECT_NEAR(mixtral.gen_tokens, 55800.33 / 387.96, 1e-9);
  EXPECT_DOUBLE_EQ(*mixtral.max_batch, 2560 * 8);  // ASUSTeK reuses AMD's server_mi325x.yaml: max_num_seqs 2560
  EXPECT_FALSE(has(mixtral, "run_settings_unknown"));
  EXPECT_EQ(mixtral.engine, "vllm-v0-multistep");  // v5.1's V0 engine, 10 scheduler steps per call
  const DatasetRow& interactive = r.rows[3];
  EXPECT_EQ(interactive.engine, "vllm");  // interactive_mi325x.yaml: VLLM_USE_V1=1, chunked prefill
  EXPECT_NEAR(*interactive.latency_s.total, 1 / 61.24, 1e-12);
  EXPECT_EQ(interactive.note("mean_tpot_ms"), "35.27");
  EXPECT_DOUBLE_EQ(*interactive.max_batch, 3840 * 8);
}

TEST(Importers, BenchlabIsRejectedBecauseItsTokenCountIsMissing) {
  const ImportResult r = run("benchlab");
  EXPECT_TRUE(r.rows.empty());
  ASSERT_EQ(r.rejects.size(), 1u);
  EXPECT_NE(r.rejects[0].reason.find("generated-token count not recorded"), std::string::npos);
}

TEST(Importers, NonMeasurementSourcesAreListedWithTheirReason) {
  EXPECT_FALSE(find_importer("vidur").run);
  EXPECT_FALSE(find_importer("ecologits").run);
}

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

// Every committed GPU-scope row (data/measured, as the importers wrote it) must describe a physically possible run:
// energy / latency is the mean power of the row's GPUs, which no board draws above its TDP (10% allowed for power
// sampling and short excursions: Wilkins' NVML rows reach 1.06) nor below its idle power. A latency taken from a
// figure other than the energy's window (a median ITL, a TPOT averaged over the drain) breaks this.
TEST(Importers, CommittedRowsImplyAMeanPowerBetweenIdleAndTdp) {
  const DatasetReadResult data = read_dataset_folder(data_dir() / "measured");
  ASSERT_GT(data.rows.size(), 5000u);
  size_t checked = 0;
  for (const DatasetRow& row : data.rows) {
    if (row.has_caveat("node_wall_power") || !row.energy_j.total || !row.latency_s.total) continue;
    const Gpu gpu = GpuCatalog::resolve_bundled(row.gpu);
    const double per_gpu_w = *row.energy_j.total / *row.latency_s.total / row.gpus;
    EXPECT_LE(per_gpu_w, 1.1 * gpu.tdp_w) << row.source_ref;
    EXPECT_GE(per_gpu_w, gpu.idle_w) << row.source_ref;
    ++checked;
  }
  EXPECT_GT(checked, 5000u);
}

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

// ---- A site's own benchmark results (measured/bench_results.h; files in tests/testdata/bench, README there) ----

std::filesystem::path bench_file(const std::string& name) {
  return std::filesystem::path(LLMCO2_TESTDATA) / "bench" / name;
}

ImportResult bench(const std::string& name, const measured::BenchSetup& setup, const std::string& format = "auto") {
  return measured::import_bench_results({bench_file(name)}, format, setup);
}

// 8 requests with 4 in flight over 4.0 s: their latencies sum to 16.0 s, so 16.0 / 4.0 = 4 ran at a time (Little's
// law) and each took 16.0 / 8 = 2.0 s; 8192 / 8 = 1024 tokens in and 1024 / 8 = 128 out. vLLM records no energy.
TEST(BenchResults, AVllmClosedLoopIsASteadyStateOfItsMeanConcurrency) {
  const ImportResult r = bench("vllm-c4-in1024-out128.json", {.gpu = "h100-sxm", .gpus = 1});
  ASSERT_TRUE(r.rejects.empty()) << r.rejects.front().message();
  ASSERT_EQ(r.rows.size(), 1u);
  const DatasetRow& row = r.rows[0];
  EXPECT_EQ(row.model, "llama-3.1-8b");
  EXPECT_EQ(row.engine, "vllm");
  EXPECT_EQ(row.measures, Measures::steady_state);
  EXPECT_DOUBLE_EQ(row.batch, 4.0);
  EXPECT_DOUBLE_EQ(*row.max_batch, 4.0);
  EXPECT_DOUBLE_EQ(row.prompt_tokens, 1024);
  EXPECT_DOUBLE_EQ(row.gen_tokens, 128);
  EXPECT_NEAR(*row.latency_s.total, 2.0, 1e-12);
  EXPECT_FALSE(row.energy_j.total);
  EXPECT_TRUE(row.has_caveat("energy_missing"));
  EXPECT_EQ(row.source_ref, "bench/vllm-c4-in1024-out128.json:1");  // folder/file:line, as every importer names rows
}

// --append-result: one result per line; the second has no duration and is refused at its line, naming the field.
TEST(BenchResults, AppendedResultsAreReadPerLineAndAMissingFieldIsNamed) {
  const ImportResult r = bench("vllm-appended.jsonl", {.gpu = "h100-sxm", .gpus = 1}, "vllm");
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(r.rows[0].batch, 1.0);  // 4 x 1.0 s over 4.0 s
  ASSERT_EQ(r.rejects.size(), 1u);
  EXPECT_EQ(r.rejects[0].line, 2);
  EXPECT_EQ(r.rejects[0].reason, "no field 'duration'");
  // A GPU count from --metadata that is no count is refused by name, not cast.
  Json result = read_json_file(bench_file("vllm-c4-in1024-out128.json"));
  const auto file = std::filesystem::path(testing::TempDir()) / "vllm-tp.json";
  for (const char* tp : {"two", "1e12"}) {
    result["tp"] = tp;
    std::ofstream(file) << result.dump();
    const ImportResult bad = measured::import_bench_results({file}, "vllm", {.gpu = "h100-sxm"});
    ASSERT_EQ(bad.rejects.size(), 1u) << tp;
    EXPECT_EQ(bad.rejects[0].reason, std::string(tp) == "two"
                                         ? "field 'tp': expected a GPU count, got 'two'"
                                         : "field 'tp': expected a whole number from 1 to 1024, got 1e+12");
  }
}

// TensorRT-LLM's fork of the client against trtllm-serve: backend "openai" names no engine (refused until --engine
// says), and the server's 3,200 J over the run are 3,200 / 8 = 400 J a request, 1,600 J for the 4 the row describes:
// 800 W over its 2.0 s, the total_gpu_power_w the file reports.
TEST(BenchResults, TheServersEnergyBlockGivesTheRowsEnergy) {
  const ImportResult refused = bench("trtllm-fork-energy.json", {.gpu = "h100-sxm", .gpus = 1});
  ASSERT_EQ(refused.rejects.size(), 1u);
  EXPECT_EQ(refused.rejects[0].reason, "backend 'openai' may be any OpenAI-compatible server: give --engine");
  const ImportResult r = bench("trtllm-fork-energy.json", {.gpu = "h100-sxm", .gpus = 1, .engine = "trt-llm"});
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_NEAR(*r.rows[0].energy_j.total, 1600, 1e-9);
  EXPECT_NEAR(*r.rows[0].energy_j.total / *r.rows[0].latency_s.total, 800, 1e-9);
  EXPECT_FALSE(r.rows[0].has_caveat("energy_missing"));
}

// trtllm-bench: the report's own mean concurrency and request latency, its GPU count; a model the catalog does not
// hold is refused until --model names one; an energy field of unknown unit is refused by name.
TEST(BenchResults, ATrtllmBenchReportIsASteadyStateAndUnknownFieldsAreRefused) {
  const ImportResult refused = bench("trtllm-bench-streaming.json", {.gpu = "h100-sxm"});
  ASSERT_EQ(refused.rejects.size(), 1u);
  EXPECT_EQ(refused.rejects[0].reason,
            "model 'meta-llama/Llama-3.1-8B-Instruct' is not in the catalog (llmco2 models): give --model");
  const ImportResult r = bench("trtllm-bench-streaming.json", {.gpu = "h100-sxm", .model = "llama-3.1-8b"});
  ASSERT_EQ(r.rows.size(), 1u);
  const DatasetRow& row = r.rows[0];
  EXPECT_EQ(row.engine, "trt-llm");
  EXPECT_EQ(row.gpus, 1);
  EXPECT_DOUBLE_EQ(row.batch, 465.6);
  EXPECT_DOUBLE_EQ(*row.max_batch, 2048);
  EXPECT_DOUBLE_EQ(*row.latency_s.total, 14.2);
  EXPECT_TRUE(row.has_caveat("energy_missing"));
  Json report = read_json_file(bench_file("trtllm-bench-streaming.json"));
  report["performance"]["total_energy_kwh"] = 0.01;
  const auto file = std::filesystem::path(testing::TempDir()) / "trtllm-energy.json";
  std::ofstream(file) << report.dump();
  const ImportResult unknown =
      measured::import_bench_results({file}, "trtllm", {.gpu = "h100-sxm", .model = "llama-3.1-8b"});
  ASSERT_EQ(unknown.rejects.size(), 1u);
  EXPECT_EQ(unknown.rejects[0].reason, "field 'total_energy_kwh': an energy field this importer does not know");
}

}  // namespace
}  // namespace llmco2
