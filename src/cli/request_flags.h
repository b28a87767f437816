// cli/request_flags.h - the request flags shared by every command (--model --gpu --gpus --batch --prompt --gen ...).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/json_io.h"
#include "graph/request.h"
#include "hardware/gpu.h"
#include "model/model_spec.h"

namespace llmco2::cli {

struct RequestFlags {
  std::string model = "llama-3.1-8b";
  std::string gpu = "h100-sxm";
  int gpus = 1;
  long batch = 1;
  long prompt = 1024;
  long gen = 128;
  std::string dtype;  // empty: the config's torch_dtype
  bool flash = true;
  std::string engine = "vllm";
};

// `with_tokens`: also --prompt and --gen (commands that take tokens from a file leave them out).
void add_request_flags(CLI::App& command, RequestFlags& flags, bool with_tokens = true);

struct ResolvedRequest {
  ModelSpec model;
  Gpu gpu;
  Request request;
  std::vector<std::string> notes;  // precision fallbacks and memory waves the user should know about
};

// Looks up the model and GPU, parses the precision and checks the request against the model (and, with `check_fit`,
// that it fits the GPUs' memory). Throws Error.
ResolvedRequest resolve_request(const RequestFlags& flags, bool check_fit = true);

// The request as JSON fields (model, gpu, gpus, batch, prompt_tokens, gen_tokens, dtype, engine) and as one line.
Json request_json(const ResolvedRequest& r);
std::string request_line(const ResolvedRequest& r);

}  // namespace llmco2::cli
