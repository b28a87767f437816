// measured/mlenergy.cc - ML.ENERGY leaderboard v1 (HF, batch 1 and an A40 batch sweep), v2 and v3 (vLLM steady state).
#include "measured/sources.h"

#include <cmath>
#include <map>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.h"
#include "core/json_io.h"
#include "measured/import_common.h"

namespace llmco2::measured {
namespace {

namespace fs = std::filesystem;

// v1 names the GPU family only (the A40 has one variant).
void set_v1_gpu(DatasetRow& row, const std::string& gpu) {
  if (gpu == "A100") row.gpu = "a100-40gb-sxm", row.caveats.push_back("gpu_variant_assumed");
  // The 32 GB board: v1 ran 12-13B fp16 models on it (Dolly-v2-12B, Pythia-12B, 13B Llamas: 24-26 GB of weights).
  else if (gpu == "V100") row.gpu = "v100-sxm2-32gb", row.caveats.push_back("gpu_variant_assumed");
  else if (gpu == "A40") row.gpu = "a40";
  else throw std::invalid_argument(fmt::format("unknown GPU '{}'", gpu));
}

DatasetRow v1_row(const CsvRowView& v, const fs::path& file, const std::string& gpu, const std::string& task,
                  double prompt_tokens) {
  DatasetRow row;
  row.source = "mlenergy-v1";
  row.source_ref = source_ref(file, v.line());
  ModelMap::bundled().apply(row, v.text("model"));
  row.dtype = "fp16";
  set_v1_gpu(row, gpu);
  row.engine = "hf-transformers";
  const double batch = v.has("batch_size") ? v.number("batch_size") : 1.0;  // final_bs1 files have no column
  row.batch = batch;
  row.measures = batch > 1 ? Measures::fixed_batch : Measures::isolated;
  row.prompt_tokens = prompt_tokens;
  row.gen_tokens = v.number("response_length");
  row.energy_j.total = v.number("energy") * batch;  // the source stores batch energy / batch size
  row.latency_s.total = v.number("latency");        // wall time of the batch
  row.caveats.insert(row.caveats.end(), {"aggregated_mean", "prompt_tokens_estimated"});
  if (batch > 1) row.caveats.push_back("batch_ran_to_longest");
  row.notes = fmt::format("task {}; prompt = mean characters/4 of the ShareGPT prompt file (no chat template)", task);
  return row;
}

ImportResult import_v1(const fs::path& folder) {
  const double prompt =
      sharegpt_mean_prompt_tokens(folder / "sharegpt_prompts_sg_90k_part1_html_cleaned_lang_first_sampled_sorted.json");
  const std::regex name(R"(([A-Z0-9]+)_(.+)_benchmark\.csv)");
  ImportResult out;
  for (const char* sub : {"final_bs1", "a40_batch_sweep"}) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(folder / sub)) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      std::smatch m;
      const std::string filename = file.filename().string();
      if (!std::regex_match(filename, m, name)) fail("{}: expected <GPU>_<task>_benchmark.csv", file.string());
      const CsvTable table = read_csv_file(file);
      convert_records(table, out, [&](const CsvRowView& v) { return v1_row(v, file, m[1], m[2], prompt); });
    }
  }
  return out;
}

// Prompts of the v2 code task (HumanEval+) are not in the copied files: an assumed mean (docs/data.md).
constexpr double kHumanEvalPromptTokens = 130;

DatasetRow v2_row(const CsvRowView& v, const fs::path& file, double chat_prompt_tokens) {
  DatasetRow row;
  row.source = "mlenergy-v2";
  row.source_ref = source_ref(file, v.line());
  ModelMap::bundled().apply(row, v.text("model"));
  const std::string& gpu = v.text("gpu");
  if (gpu == "NVIDIA A100-SXM4-40GB") row.gpu = "a100-40gb-sxm";
  else if (gpu == "NVIDIA H100 80GB HBM3") row.gpu = "h100-sxm";
  else throw std::invalid_argument(fmt::format("unknown GPU '{}'", gpu));
  const int tp = static_cast<int>(v.number("tp")), pp = static_cast<int>(v.number("pp"));
  // TP 8 x PP 2 ran over two 8-GPU AWS instances (p4d.24xlarge, p5.48xlarge: SOURCE.md): each vLLM virtual engine
  // capped at the file name's batch, so "Max BS" is pp times it and "Avg BS" counts the running requests of both.
  row.gpus = tp * pp;
  row.tensor_parallel = tp;
  row.pipeline_parallel = pp;
  row.engine = "vllm-v0";  // vLLM 0.5.4 (SOURCE.md): the v0 engine, host work serial with the GPU (engines.json)
  row.measures = Measures::steady_state;
  row.batch = v.number("Avg BS (reqs)");
  row.max_batch = v.number("Max BS (reqs)");
  const bool chat = v.text("task") == "chat";
  row.prompt_tokens = chat ? chat_prompt_tokens : kHumanEvalPromptTokens;
  row.gen_tokens = v.number("Avg Output Tokens");
  row.energy_j.total = v.number("Energy/req (J)") * row.batch;
  // The steady state's time per request (Energy/req's window). Avg TPOT is no steady-state figure: it averages every
  // decode iteration of the run, the drain after the queue empties included, whose shrinking batches run short steps
  // (x0.34-1.04 of the steady step; leaderboard-v2@c3af7f3
  // benchmark/llm_text_generation/chat/scripts/aggregate_leaderboard_data.py L39-60).
  row.latency_s.total = steady_state_latency_s(row.batch, row.gen_tokens, v.number("Token tput (tok/s)"));
  row.caveats.insert(row.caveats.end(), {"aggregated_mean", "prompt_tokens_estimated"});
  // The client sends temperature 0.8, top_p 0.95 for chat and temperature 0 for code (leaderboard-v2@c3af7f3,
  // benchmark/llm_text_generation/{chat,code}/scripts/benchmark_client.py).
  if (!chat) row.caveats.push_back("greedy_sampling");
  row.notes = fmt::format(
      "task {}; prompt {}; latency_total = Avg BS x gen / Token tput; avg_tpot_s {}", v.text("task"),
      chat ? "= mean characters/4 of the 500 ShareGPT prompts" : "assumed (HumanEval+)", v.text("Avg TPOT (s)"));
  return row;
}

ImportResult import_v2(const fs::path& folder) {
  const double chat_prompt = sharegpt_mean_prompt_tokens(folder / "chat_prompts_ShareGPT_V3_filtered_500.json");
  const fs::path file = folder / "mlenergy_v2_llm_configs_flat.csv";
  ImportResult out;
  convert_records(read_csv_file(file), out, [&](const CsvRowView& v) { return v2_row(v, file, chat_prompt); });
  return out;
}

// v3 stores no prompt lengths: assumed means per task (docs/data.md). Chat uses the ShareGPT estimate of v2.
double v3_prompt_tokens(const std::string& task, double chat_prompt_tokens) {
  if (task == "lm-arena-chat") return chat_prompt_tokens;
  if (task == "gpqa") return 300;
  if (task == "sourcegraph-fim") return 1500;
  throw std::invalid_argument(fmt::format("unknown task '{}'", task));
}

// fp8 checkpoints of DeepSeek and Qwen are block-scaled (their config.json's quantization_config has
// weight_block_size [128, 128]: data/models/deepseek-ai-DeepSeek-V3.1.json, Qwen-Qwen3-Coder-480B-A35B-Instruct-FP8);
// Meta's Llama FP8 checkpoints scale per channel (fbgemm_fp8, compressed-tensors channel strategy).
std::string v3_dtype(const std::string& precision, const std::string& model_id) {
  if (precision == "bfloat16") return "bf16";
  if (precision == "fp8")
    return model_id.starts_with("deepseek-ai/") || model_id.starts_with("Qwen/") ? "wfp8-afp8-kvbf16-blk"
                                                                                 : "wfp8afp8kvbf16";
  // gpt-oss, the only MXFP4 models: the checkpoint's own precision (MXFP4 experts, bf16 attention and KV cache).
  if (precision == "mxfp4") return "";
  throw std::invalid_argument(fmt::format("unknown weight_precision '{}'", precision));
}

// Coefficient of variation of a histogram of output lengths (bin midpoints), 0 when it is empty.
double histogram_cv(const Json& histogram) {
  const auto& bins = histogram.at("bins");
  const auto& counts = histogram.at("counts");
  double n = 0, sum = 0, sum_sq = 0;
  for (size_t i = 0; i < counts.size() && i + 1 < bins.size(); ++i) {
    const double mid = (bins[i].get<double>() + bins[i + 1].get<double>()) / 2, c = counts[i].get<double>();
    n += c, sum += c * mid, sum_sq += c * mid * mid;
  }
  if (n < 2 || sum <= 0) return 0;
  const double mean = sum / n;
  return std::sqrt(std::max(0.0, sum_sq / n - mean * mean)) / mean;
}

// v3's per-configuration output-length histograms (models/<org>__<model>__<task>.json), by the flat CSV's columns.
std::string v3_config_key(const std::string& model, const std::string& task, const std::string& gpu, double gpus,
                          double tp, double dp, double ep, double max_num_seqs) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", model, task, gpu, gpus, tp, dp, ep, max_num_seqs);
}

std::map<std::string, double> v3_output_cvs(const fs::path& models_dir) {
  std::map<std::string, double> out;
  if (!fs::is_directory(models_dir)) return out;
  for (const auto& entry : fs::directory_iterator(models_dir)) {
    if (entry.path().extension() != ".json") continue;
    const Json doc = read_json_file(entry.path());
    const std::string model = doc.at("model_id"), task = doc.at("task");
    for (const auto& c : doc.at("configurations")) {
      if (!c.contains("output_length_distribution")) continue;
      const auto& par = c.at("parallelization");
      out.emplace(v3_config_key(model, task, c.at("gpu_model"), c.at("num_gpus").get<double>(),
                                par.at("tensor_parallel").get<double>(), par.at("data_parallel").get<double>(),
                                par.at("expert_parallel").get<double>(), c.at("max_num_seqs").get<double>()),
                  histogram_cv(c.at("output_length_distribution")));
    }
  }
  return out;
}

DatasetRow v3_row(const CsvRowView& v, const fs::path& file, double chat_prompt_tokens,
                  const std::map<std::string, double>& output_cvs) {
  DatasetRow row;
  row.source = "mlenergy-v3";
  row.source_ref = source_ref(file, v.line());
  ModelMap::bundled().apply(row, v.text("model_id"));
  row.dtype = v3_dtype(v.text("weight_precision"), v.text("model_id"));
  const std::string& gpu = v.text("gpu_model");
  if (gpu == "H100") row.gpu = "h100-sxm", row.caveats.push_back("gpu_variant_assumed");
  else if (gpu == "B200") row.gpu = "b200";
  else throw std::invalid_argument(fmt::format("unknown gpu_model '{}'", gpu));
  row.gpus = static_cast<int>(v.number("num_gpus"));
  row.data_parallel = static_cast<int>(v.number("data_parallel"));
  // Expert-parallel rows record tensor_parallel 1: the experts are sharded over all GPUs and the attention is split
  // over the GPUs of one data-parallel replica, which the format describes as tensor parallelism.
  const int ep = static_cast<int>(v.number("expert_parallel"));
  row.tensor_parallel = ep > 1 ? row.gpus / row.data_parallel : static_cast<int>(v.number("tensor_parallel"));
  row.engine = "vllm";
  row.measures = Measures::steady_state;
  row.batch = v.number("avg_batch_size");
  row.max_batch = v.number("max_num_seqs");
  row.prompt_tokens = v3_prompt_tokens(v.text("task"), chat_prompt_tokens);
  row.gen_tokens = v.number("avg_output_len_tokens");
  row.energy_j.total = v.number("energy_per_request_joules") * row.batch;
  // The steady state's time per request: energy / latency is then the measured mean power (avg_power_watts_all_gpus,
  // <= TDP). The median ITL leaves out the steps that carry prefill chunks and the client's multi-token stream chunks:
  // x0.06-1.39 of the mean step (median 0.94); read by serve-validate from the notes.
  row.latency_s.total = steady_state_latency_s(row.batch, row.gen_tokens, v.number("output_throughput_tokens_per_sec"));
  const auto cv = output_cvs.find(v3_config_key(v.text("model_id"), v.text("task"), gpu, v.number("num_gpus"),
                                                v.number("tensor_parallel"), v.number("data_parallel"), ep,
                                                v.number("max_num_seqs")));
  if (cv != output_cvs.end() && cv->second > 0) row.gen_tokens_cv = cv->second;
  // Every request carries repetition_penalty 1.1 with top_p 0.95 (ml-energy/benchmark@c1d6557,
  // mlenergy/benchmark/llm/benchmark.py L130-136, L331, L482).
  row.caveats.insert(row.caveats.end(), {"aggregated_mean", "prompt_tokens_estimated", "sampling_penalties"});
  row.notes = fmt::format(
      "task {}; prompt assumed; latency_total = avg batch x gen / output throughput; median_itl_ms {}{}",
      v.text("task"), v.text("median_itl_ms"),
      ep > 1 ? fmt::format("; expert_parallel {} over data_parallel {} replicas", ep, row.data_parallel) : "");
  return row;
}

ImportResult import_v3(const fs::path& folder) {
  // The chat prompt estimate comes from v2's ShareGPT file, beside this folder in ../shared/data/measured.
  const fs::path v2_prompts =
      folder.parent_path() / "mlenergy_leaderboard_v2" / "chat_prompts_ShareGPT_V3_filtered_500.json";
  const double chat_prompt = sharegpt_mean_prompt_tokens(v2_prompts);
  const fs::path file = folder / "mlenergy_v3_llm_configs_flat.csv";
  const auto output_cvs = v3_output_cvs(folder / "models");
  ImportResult out;
  convert_records(read_csv_file(file), out,
                  [&](const CsvRowView& v) { return v3_row(v, file, chat_prompt, output_cvs); });
  return out;
}

}  // namespace

ImportResult import_mlenergy_v1(const fs::path& folder) { return import_v1(folder); }
ImportResult import_mlenergy_v2(const fs::path& folder) { return import_v2(folder); }
ImportResult import_mlenergy_v3(const fs::path& folder) { return import_v3(folder); }

}  // namespace llmco2::measured
