// cli/request_flags.cc - shared request flags.
#include "cli/request_flags.h"

#include <iostream>

#include <fmt/format.h>

#include "features/memory_fit.h"
#include "engine/engine_profile.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"

namespace llmco2::cli {

void add_request_flags(CLI::App& c, RequestFlags& f, bool with_tokens) {
  c.add_option("--model", f.model,
               "bundled model id, HF repo id, a config.json, or a Hugging Face snapshot folder (write ./NAME for the "
               "path when NAME is also a bundled id)")
      ->capture_default_str();
  c.add_option("--gpu", f.gpu, "GPU id, alias, nvidia-smi name or path of a GPU JSON file")->capture_default_str();
  c.add_option("--gpus", f.gpus, "number of GPUs (tensor parallelism)")->capture_default_str();
  c.add_option("--batch", f.batch, "sequences per batch")->capture_default_str();
  if (with_tokens) {
    c.add_option("--prompt", f.prompt, "prompt tokens per sequence")->capture_default_str();
    c.add_option("--gen", f.gen, "generated tokens per sequence")->capture_default_str();
  }
  c.add_option("--dtype", f.dtype, "precision: bf16, fp16, fp8, int8, ... or per class, e.g. w8a16kv16 "
                                   "(default: the config's torch_dtype)");
  c.add_flag("--flash,!--no-flash", f.flash, "fused flash attention (default) or eager attention kernels");
  c.add_option("--engine", f.engine, "serving engine: vllm, hf-transformers, trt-llm, sglang, tgi, llama.cpp")
      ->capture_default_str();
}

ResolvedRequest resolve_request(const RequestFlags& f, bool check_fit) {
  std::string model_note;
  ModelSpec model = ModelCatalog::bundled().resolve(f.model, &model_note);
  Gpu gpu = GpuCatalog::bundled().resolve(f.gpu);
  Request r;
  r.batch = f.batch;
  r.prompt_tokens = f.prompt;
  r.gen_tokens = f.gen;
  r.gpus = f.gpus;
  // The config's quantization_config sets the default; a type the GPU has no tensor-core path for runs as the engine
  // would fall back (e.g. fp8 on an A100: weight-only fp8, 16-bit compute), with a note.
  EnginePrecision precision = engine_precision(gpu, model.precision_for(f.dtype), f.engine);
  r.precision = precision.precision;
  r.flash_attention = f.flash;
  r.engine = f.engine;
  validate_request(r, model);
  std::vector<std::string> notes = std::move(precision.notes);
  if (!model_note.empty()) notes.insert(notes.begin(), model_note);
  if (check_fit) {
    check_memory_fit(model, r, gpu);
    const MemoryPlan plan = plan_memory(model, r, gpu);
    if (plan.waves > 1) notes.push_back(plan.note);
  }
  for (const auto& note : notes) std::cerr << "llmco2: note: " << note << "\n";
  return {std::move(model), std::move(gpu), std::move(r), std::move(notes)};
}

Json request_json(const ResolvedRequest& r) {
  return {{"model", r.model.id},
          {"gpu", r.gpu.id},
          {"gpus", r.request.gpus},
          {"batch", r.request.batch},
          {"prompt_tokens", r.request.prompt_tokens},
          {"gen_tokens", r.request.gen_tokens},
          {"dtype", r.request.precision.to_string()},
          {"engine", r.request.engine},
          {"notes", r.notes}};
}

std::string request_line(const ResolvedRequest& r) {
  return fmt::format("{} on {} x {} ({}), batch {}, prompt {}, gen {}, {}", r.model.id, r.request.gpus, r.gpu.id,
                     r.request.engine, r.request.batch, r.request.prompt_tokens, r.request.gen_tokens,
                     r.request.precision.to_string());
}

}  // namespace llmco2::cli
