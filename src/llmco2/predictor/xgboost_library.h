// predictor/xgboost_library.h - libxgboost (XGBoost's C API) loaded with dlopen on first use, so that only a tree
// predictor (DeepEn) and its training map it: `llmco2 predict` with the GNN, the server and the bindings never do.
#pragma once

#include "predictor/module.h"

#include <xgboost/c_api.h>  // the C API's types and signatures only; nothing links libxgboost

namespace llmco2::predictor {

// The entry points llmco2 calls, with the C API's own signatures.
struct XgboostApi {
  decltype(&XGBGetLastError) get_last_error = nullptr;
  decltype(&XGBoosterCreate) booster_create = nullptr;
  decltype(&XGBoosterFree) booster_free = nullptr;
  decltype(&XGBoosterLoadModelFromBuffer) booster_load_model_from_buffer = nullptr;
  decltype(&XGBoosterSaveModelToBuffer) booster_save_model_to_buffer = nullptr;
  decltype(&XGBoosterSetParam) booster_set_param = nullptr;
  decltype(&XGBoosterUpdateOneIter) booster_update_one_iter = nullptr;
  decltype(&XGBoosterPredict) booster_predict = nullptr;
  decltype(&XGDMatrixCreateFromMat) dmatrix_create_from_mat = nullptr;
  decltype(&XGDMatrixSetFloatInfo) dmatrix_set_float_info = nullptr;
  decltype(&XGDMatrixFree) dmatrix_free = nullptr;
};

// The library, loaded once (thread-safe): $LLMCO2_XGBOOST_LIBRARY when set, else libxgboost.so.0 (Debian
// libxgboost0), else libxgboost.so. Throws Error naming the library, dlerror()'s reason and the package to install.
const XgboostApi& xgboost_api();

// Throws Error "xgboost: <what>: <XGBoost's last error>" when `status` is not 0.
void check_xgboost(int status, const char* what);

}  // namespace llmco2::predictor
