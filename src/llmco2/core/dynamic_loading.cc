// core/dynamic_loading.cc - a program is dynamically linked when it has a dynamic section (_DYNAMIC, which the
// linker defines only then; weak, so that a static link leaves it null).
#include "core/dynamic_loading.h"

#include <link.h>

#pragma weak _DYNAMIC

namespace llmco2 {

bool can_dlopen() { return _DYNAMIC != nullptr; }

}  // namespace llmco2
