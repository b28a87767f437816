// core/error.cc - anchors the Error type's vtable in the core library.
#include "core/error.h"
