// cli/request_flags.cc - shared request flags.
#include "cli/request_flags.h"

#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace llmco2::cli {

void add_request_flags(CLI::App& c, api::Request& r, bool with_tokens) {
  c.add_option(
       "--model", r.model,
       "bundled model id or its HF repo id, a config.json, or a Hugging Face snapshot folder (write ./NAME for the "
       "path when NAME is also a bundled id)")
      ->capture_default_str();
  c.add_option("--gpu", r.gpu, "GPU id, alias, nvidia-smi name or path of a GPU JSON file")->capture_default_str();
  c.add_option("--gpus", r.gpus, "number of GPUs (tensor parallelism)")->capture_default_str();
  c.add_option("--batch", r.batch, "sequences per batch")->capture_default_str();
  if (with_tokens) {
    c.add_option("--prompt", r.prompt_tokens, "prompt tokens per sequence")->capture_default_str();
    c.add_option("--gen", r.gen_tokens, "generated tokens per sequence")->capture_default_str();
  }
  c.add_option("--dtype", r.dtype,
               "precision: bf16, fp16, fp8, int8, ... or per class, e.g. w8a16kv16, "
               "wfp8-afp8-kvbf16-blk (block-scaled fp8) (default: the checkpoint's own)");
  c.add_flag("--flash,!--no-flash", r.flash_attention, "fused flash attention (default) or eager attention kernels");
  c.add_option("--engine", r.engine, "serving engine: " + fmt::format("{}", fmt::join(api::engine_names(), ", ")))
      ->capture_default_str();
  c.add_option("--power-cap", r.power_cap_w,
               "each GPU's power limit in W (nvidia-smi -pl), above its idle power and "
               "at most its TDP; default: the TDP");
  c.add_option("--clock-mhz", r.clock_mhz,
               "each GPU's locked SM clock in MHz (nvidia-smi -lgc), at most its maximum; "
               "default: not locked");
  c.add_option("--spec", r.spec,
               "speculative decoding: eagle, eagle3, mtp, ngram (measured acceptance, data/engines/speculation.json) "
               "or draft:MODEL (a draft model by id, with --spec-acceptance); default: off");
  c.add_option("--spec-tokens", r.spec_tokens, "draft tokens per step (default: the method's, e.g. eagle 3)");
  c.add_option("--spec-acceptance", r.spec_acceptance,
               "per-token acceptance rate of the drafts, in (0, 1) (default: the method's measured acceptance)");
  c.add_option("--pp", r.pipeline_parallel,
               "pipeline stages (vLLM --pipeline-parallel-size), each of --gpus GPUs: --pp x --gpus GPUs in all, "
               "the layers split in consecutive stages, the batch in one micro-batch per stage; default 1");
  c.add_flag("--expert-parallel", r.expert_parallel,
             "mixture of experts over --gpus: each GPU holds whole experts (vLLM --enable-expert-parallel), not a "
             "slice of every expert");
}

void print_warnings(const std::vector<std::string>& lines) {
  for (const auto& line : lines) std::cerr << "llmco2: note: " << line << "\n";
}

}  // namespace llmco2::cli
