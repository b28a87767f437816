// core/paths.h - where the bundled catalogs live (data/ of the source tree, or $LLMCO2_DATA_DIR).
#pragma once

#include <filesystem>
#include <string>

namespace llmco2 {

// The folder holding models/ and gpus/: $LLMCO2_DATA_DIR if set, else the source tree's data/ baked in at build time.
std::filesystem::path data_dir();

// The folder of imported measurements a command reads or writes: `chosen` when given, else data_dir()/measured.
std::filesystem::path measured_dir(const std::string& chosen);

}  // namespace llmco2
