// model/hf_config.h - Hugging Face config.json -> ModelSpec; the only code that knows HF key names.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "model/model_spec.h"

namespace llmco2 {

// The model_type values understood, e.g. "llama", "gemma2", "gpt_oss".
const std::vector<std::string>& supported_families();

// Reads an architecture from a parsed config.json. `source` names the file in error messages.
// Throws Error for an unsupported model_type, a missing key (naming the accepted key names) or an impossible value.
ModelSpec model_from_hf_config(const Json& config, const std::string& source);

// Reads a config.json file.
ModelSpec read_hf_config(const std::filesystem::path& path);

}  // namespace llmco2
