// cli/cmd_import.cc - `llmco2 import SOURCE...`: public measurements into data/measured/<source>.csv
// (research::import_source), with each source's rejected rows summed up by reason.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "llmco2/research.h"

namespace llmco2::cli {
namespace {

void import_one(const research::SourceInfo& source, const research::ImportOptions& o) {
  if (!source.importable) {
    std::cerr << fmt::format("{}: skipped, {}\n", source.id, source.summary);
    return;
  }
  const research::ImportSummary s = research::import_source(source.id, o);
  std::cerr << fmt::format("{}: {} rows, {} rejected -> {}\n", s.id, s.rows, s.rejected, s.written);
  for (const auto& [reason, count] : s.reject_reasons) std::cerr << fmt::format("    {:>5} x {}\n", count, reason);
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto* command = app.add_subcommand("import", "convert public measurements into the dataset format");
  auto o = std::make_shared<research::ImportOptions>();
  auto chosen = std::make_shared<std::vector<std::string>>();
  const std::vector<research::SourceInfo> sources = research::measurement_sources();
  std::vector<std::string> ids{"all"};
  for (const auto& source : sources) ids.push_back(source.id);
  command->add_option("sources", *chosen, "sources to import, or all")->required()->check(CLI::IsMember(ids));
  command->add_option("--from", o->from, "folder holding the source folders")->capture_default_str();
  command->add_option("--out-dir", o->out_dir, "where <source>.csv is written (default: data/measured)");
  command->callback([=] {
    for (const auto& id : *chosen)
      for (const auto& source : sources)
        if (id == "all" || id == source.id) import_one(source, *o);
  });
}

void add_import_bench_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "import-bench",
      "a site's own vllm bench serve or trtllm-bench results into the dataset format (calibrate --site)");
  auto o = std::make_shared<research::ImportBenchOptions>();
  command->add_option("files", o->files, "result files (vllm bench serve --save-result, trtllm-bench --report_json)")
      ->required();
  command->add_option("--format", o->format, "vllm, trtllm or auto")->capture_default_str();
  command->add_option("--gpu", o->gpu, "GPU id of the catalog the runs used (the files name none)")->required();
  command->add_option("--gpus", o->gpus, "GPUs of the server (default: trtllm-bench's world_size)")
      ->check(CLI::Range(1, 1024));
  command->add_option("--engine", o->engine, "engine id (default: the tool's: vllm, trt-llm)");
  command->add_option("--model", o->model, "model id (default: the file's Hugging Face id, from the catalog)");
  command->add_option("--dtype", o->dtype, "precision (default: the checkpoint's)");
  command->add_option("--source", o->source, "the rows' source id")->capture_default_str();
  command->add_option("--out", o->out, "dataset CSV to write")->required();
  command->callback([o] {
    const research::ImportBenchSummary s = research::import_bench(*o);
    for (const auto& reject : s.rejects) std::cerr << "import-bench: refused " << reject << "\n";
    std::cerr << fmt::format("import-bench: {} rows -> {}\n", s.rows, o->out);
  });
}

}  // namespace llmco2::cli
