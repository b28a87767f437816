// dataset/plan.h - a plan: the configurations to label or measure (model,gpu,gpus,batch,prompt,gen[,dtype,engine]).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "dataset/dataset_csv.h"
#include "dataset/module.h"

namespace llmco2::dataset {

struct PlanRow {
  long line = 0;  // line in the plan file
  std::string model, gpu;
  int gpus = 1;
  long batch = 1, prompt = 0, gen = 1;
  std::string dtype;   // "" : the model's own dtype
  std::string engine;  // "" : vllm
};

struct PlanReadResult {
  std::vector<PlanRow> rows;
  std::vector<RowReject> rejects;  // rows with a bad count, each with its line and reason
};

// Reads a plan CSV. Missing required columns throw Error; a bad row is rejected and the rest kept.
PlanReadResult read_plan(const std::filesystem::path& path);
PlanReadResult parse_plan(const CsvTable& table);

// The plan as CSV (model,gpu,gpus,batch,prompt,gen,dtype,engine), and written atomically.
std::string plan_to_csv(const std::vector<PlanRow>& rows);
void write_plan(const std::filesystem::path& path, const std::vector<PlanRow>& rows);

}  // namespace llmco2::dataset
