// model/hf_config.h - Hugging Face config.json -> ModelSpec; the only code that knows HF key names.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "model/model_spec.h"
#include "model/module.h"

namespace llmco2::model {

// The model_type values understood, e.g. "llama", "gemma2", "gpt_oss".
const std::vector<std::string>& supported_families();

// Reads an architecture from a parsed config.json. `source` names the file in error messages.
// Its quantization_config (awq, gptq, fp8, mxfp4, bitsandbytes, compressed-tensors, modelopt), or a ModelOpt
// hf_quant_config.json when given, sets default_precision.
// Throws Error for an unsupported model_type, a missing key (naming the accepted key names) or an impossible value.
ModelSpec model_from_hf_config(const Json& config, const std::string& source, const Json* hf_quant_config = nullptr);

// ModelOpt's quantisation file beside a config: <dir>/hf_quant_config.json for <dir>/config.json, else
// <stem>.hf_quant_config.json beside <stem>.json (the naming of the bundled and reference copies).
std::filesystem::path hf_quant_config_path(const std::filesystem::path& config_path);

// Reads a config.json file, and its hf_quant_config.json when there is one.
ModelSpec read_hf_config(const std::filesystem::path& path);

}  // namespace llmco2::model
