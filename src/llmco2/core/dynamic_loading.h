// core/dynamic_loading.h - whether this program can load shared libraries with dlopen (a statically linked one cannot).
#pragma once

namespace llmco2 {

// False in a statically linked program (llmco2 itself, see src/cli/CMakeLists.txt): glibc's dlopen there would map a
// second libc under libxgboost or NVML and crash. The commands that need them run in llmco2-dynamic instead.
bool can_dlopen();

}  // namespace llmco2
