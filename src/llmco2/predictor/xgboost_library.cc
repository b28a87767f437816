// predictor/xgboost_library.cc - dlopen of libxgboost and its entry points.
#include "predictor/xgboost_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/dynamic_loading.h"
#include "core/error.h"

namespace llmco2::predictor {
namespace {

template <typename Function>
void bind_symbol(void* library, const char* symbol, const std::string& path, Function& out) {
  void* address = dlsym(library, symbol);
  if (address == nullptr) fail("xgboost: {} has no {} (XGBoost 1.6 or later is needed)", path, symbol);
  out = reinterpret_cast<Function>(address);
}

XgboostApi load() {
  if (!can_dlopen())
    fail(
        "xgboost: this program is linked statically and cannot load libxgboost; llmco2-dynamic, beside llmco2, runs "
        "the tree predictors (llmco2 hands it --predictor deepen and --model-file)");
  std::vector<std::string> candidates = {"libxgboost.so.0", "libxgboost.so"};
  if (const char* env = std::getenv("LLMCO2_XGBOOST_LIBRARY"); env != nullptr && *env != '\0') candidates = {env};
  void* library = nullptr;
  std::string path, reason;
  for (const auto& candidate : candidates) {
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) {
      path = candidate;
      break;
    }
    if (reason.empty()) reason = dlerror();
  }
  if (library == nullptr)
    fail(
        "xgboost: the tree predictors need libxgboost, which could not be loaded ({}); install Debian's "
        "libxgboost0 or set LLMCO2_XGBOOST_LIBRARY to the library's path",
        reason);
  XgboostApi api;  // the library stays mapped for the life of the process
  bind_symbol(library, "XGBGetLastError", path, api.get_last_error);
  bind_symbol(library, "XGBoosterCreate", path, api.booster_create);
  bind_symbol(library, "XGBoosterFree", path, api.booster_free);
  bind_symbol(library, "XGBoosterLoadModelFromBuffer", path, api.booster_load_model_from_buffer);
  bind_symbol(library, "XGBoosterSaveModelToBuffer", path, api.booster_save_model_to_buffer);
  bind_symbol(library, "XGBoosterSetParam", path, api.booster_set_param);
  bind_symbol(library, "XGBoosterUpdateOneIter", path, api.booster_update_one_iter);
  bind_symbol(library, "XGBoosterPredict", path, api.booster_predict);
  bind_symbol(library, "XGDMatrixCreateFromMat", path, api.dmatrix_create_from_mat);
  bind_symbol(library, "XGDMatrixSetFloatInfo", path, api.dmatrix_set_float_info);
  bind_symbol(library, "XGDMatrixFree", path, api.dmatrix_free);
  return api;
}

}  // namespace

const XgboostApi& xgboost_api() {
  static const XgboostApi api = load();  // a throw leaves it unset: the next call tries again
  return api;
}

void check_xgboost(int status, const char* what) {
  if (status != 0) fail("xgboost: {}: {}", what, xgboost_api().get_last_error());
}

}  // namespace llmco2::predictor
