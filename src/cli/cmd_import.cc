// cli/cmd_import.cc - `llmco2 import SOURCE...`: public measurements into data/measured/<source>.csv.
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/csv.h"
#include "core/error.h"
#include "core/json_io.h"
#include "core/paths.h"
#include "dataset/dataset_csv.h"
#include "measured/importer.h"

namespace llmco2::cli {
namespace {

struct ImportOptions {
  std::vector<std::string> sources;
  std::string from = "../shared/data/measured";
  std::string out_dir;
};

// Reasons grouped with their counts, most frequent first.
void print_reject_summary(const std::vector<RowReject>& rejects) {
  std::map<std::string, int> counts;
  for (const auto& r : rejects) ++counts[reason_class(r.reason)];
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [reason, count] : counts) sorted.emplace_back(count, reason);
  std::sort(sorted.rbegin(), sorted.rend());
  for (const auto& [count, reason] : sorted) std::cerr << fmt::format("    {:>5} x {}\n", count, reason);
}

void import_one(const Importer& importer, const ImportOptions& o) {
  if (!importer.run) {
    std::cerr << fmt::format("{}: skipped, {}\n", importer.id, importer.summary);
    return;
  }
  const std::filesystem::path folder = std::filesystem::path(o.from) / importer.folder;
  if (!std::filesystem::is_directory(folder))
    fail("{}: source folder {} not found (set --from to ../shared/data/measured)", importer.id, folder.string());
  const ImportResult result = importer.run(folder);
  const std::filesystem::path out_dir = o.out_dir.empty() ? data_dir() / "measured" : std::filesystem::path(o.out_dir);
  std::filesystem::create_directories(out_dir);
  write_dataset(out_dir / (importer.id + ".csv"), result.rows);
  write_import_rejects(out_dir / (importer.id + ".rejects.csv"), result.rejects);
  std::cerr << fmt::format("{}: {} rows, {} rejected -> {}\n", importer.id, result.rows.size(), result.rejects.size(),
                           (out_dir / (importer.id + ".csv")).string());
  print_reject_summary(result.rejects);
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto* command = app.add_subcommand("import", "convert public measurements into the dataset format");
  auto o = std::make_shared<ImportOptions>();
  std::vector<std::string> ids{"all"};
  for (const auto& importer : importers()) ids.push_back(importer.id);
  command->add_option("sources", o->sources, "sources to import, or all")->required()->check(CLI::IsMember(ids));
  command->add_option("--from", o->from, "folder holding the source folders")->capture_default_str();
  command->add_option("--out-dir", o->out_dir, "where <source>.csv is written (default: data/measured)");
  command->callback([o] {
    for (const auto& id : o->sources) {
      if (id == "all")
        for (const auto& importer : importers()) import_one(importer, *o);
      else
        import_one(find_importer(id), *o);
    }
  });
}

}  // namespace llmco2::cli
