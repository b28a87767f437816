// Tests of can_dlopen: true in this (dynamically linked) test program, as its own dynamic section says.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include "core/dynamic_loading.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

TEST(DynamicLoading, ADynamicallyLinkedProgramCanDlopen) {
  EXPECT_TRUE(can_dlopen());
  void* libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);  // what it promises: a library loads
  ASSERT_NE(libm, nullptr) << dlerror();
  EXPECT_NE(dlsym(libm, "cos"), nullptr);
  dlclose(libm);
}

}  // namespace
}  // namespace llmco2
