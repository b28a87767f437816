// Atomic outputs and run manifests: FNV-1a against its published test vectors, a manifest listing exactly the outputs
// a run committed (relative names, sizes, checksums), a file changed by another run reported as stale, unique
// temporary names, and no temporary file left behind by a finished or failed write.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/checksum.h"
#include "core/error.h"
#include "core/json_io.h"
#include "core/output_manifest.h"
#include "core/plot.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(testing::TempDir()) / (name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    names.push_back(fs::relative(entry.path(), dir).generic_string());
  std::sort(names.begin(), names.end());
  return names;
}

// The FNV test vectors of Fowler, Noll and Vo (isthe.com/chongo/tech/comp/fnv): FNV-1a 64 of "", "a", "foobar".
TEST(Checksum, Fnv1a64MatchesThePublishedVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
  Fnv1a64 pieces;
  pieces.update("foo");
  pieces.update("bar");
  EXPECT_EQ(pieces.value(), 0x85944171f73967e8ull);
  EXPECT_EQ(checksum_hex(0xaf63dc4c8601ec8cull), "af63dc4c8601ec8c");
}

TEST(RunManifest, ListsTheRunsOutputsLastWrittenWithSizesAndChecksums) {
  const fs::path dir = fresh_dir("manifest_lists");
  fs::create_directories(dir / "report");
  write_file_atomic(dir / "before.txt", "not this run\n");
  {
    RunManifest manifest(manifest_in_folder(dir / "report"));
    write_file_atomic(dir / "report" / "a.csv", "x\n1\n");
    write_file_atomic(dir / "report" / "a.csv", "x\n2\n");  // written twice: listed once, as last written
    write_file_atomic(dir / "requests.csv", "foobar");
    write_file_atomic(dir / "scratch.dat", "gone");
    fs::remove(dir / "scratch.dat");  // removed before the end: not an output
    manifest.commit();
  }
  write_file_atomic(dir / "after.txt", "not this run either\n");
  const Json m = read_json_file(dir / "report" / "manifest.json");
  EXPECT_EQ(m["schema"], "llmco2-run-manifest/1");
  EXPECT_FALSE(m["run_id"].get<std::string>().empty());
  ASSERT_EQ(m["outputs"].size(), 2u) << m.dump(2);
  EXPECT_EQ(m["outputs"][0]["name"], "a.csv");
  EXPECT_EQ(m["outputs"][0]["size_bytes"], 4);
  EXPECT_EQ(m["outputs"][0]["fnv1a64"], checksum_hex(fnv1a64("x\n2\n")));
  EXPECT_EQ(m["outputs"][1]["name"], "../requests.csv");
  EXPECT_EQ(m["outputs"][1]["size_bytes"], 6);
  EXPECT_EQ(m["outputs"][1]["fnv1a64"], "85944171f73967e8");
  EXPECT_TRUE(stale_outputs(dir / "report" / "manifest.json").empty());
}

TEST(RunManifest, AFileRewrittenByAnotherRunIsStale) {
  const fs::path dir = fresh_dir("manifest_stale");
  {
    RunManifest manifest(manifest_beside(dir / "data.csv"));
    write_file_atomic(dir / "data.csv", "a\n1\n");
    write_file_atomic(dir / "data.csv.failures.csv", "line\n");
    manifest.commit();
  }
  EXPECT_TRUE(fs::exists(dir / "data.csv.manifest.json"));
  write_file_atomic(dir / "data.csv", "a\n9\n");  // same size, other content
  fs::remove(dir / "data.csv.failures.csv");
  const auto stale = stale_outputs(dir / "data.csv.manifest.json");
  ASSERT_EQ(stale.size(), 2u);
  EXPECT_EQ(stale[0], "data.csv: differs from the manifest (written by another run)");
  EXPECT_EQ(stale[1], "data.csv.failures.csv: missing");
}

TEST(RunManifest, OneAtATimeAndNotAManifestIsAnError) {
  const fs::path dir = fresh_dir("manifest_one");
  RunManifest first(dir / "one.json");
  EXPECT_THROW(RunManifest(dir / "two.json"), Error);
  write_file_atomic(dir / "other.json", "{\"outputs\": []}");
  EXPECT_THROW(stale_outputs(dir / "other.json"), Error);
}

TEST(AtomicFile, TwoWritersOfOneFileUseTheirOwnTemporaryAndLeaveNone) {
  const fs::path dir = fresh_dir("atomic_two");
  AtomicFile a(dir / "out.csv"), b(dir / "out.csv");
  EXPECT_NE(a.temporary_path(), b.temporary_path());
  a.stream() << "from a\n";
  b.stream() << "from b\n";
  b.commit();
  a.commit();
  std::ifstream in(dir / "out.csv");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "from a\n");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"out.csv"});
  { AtomicFile dropped(dir / "never.csv"); }  // not committed: its temporary file goes with it
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"out.csv"});
}

// A child that has exited and been reaped: its pid names no process (until the system reuses it, far later).
long dead_pid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

TEST(AtomicFile, RemovesTheTemporaryFilesOfDeadRunsOnly) {
  const fs::path dir = fresh_dir("atomic_abandoned");
  const std::string dead = "out.csv.tmp-" + std::to_string(dead_pid()) + "-1f";
  const std::string live = "out.csv.tmp-" + std::to_string(getpid()) + "-2e";
  const std::string other = "other.csv.tmp-" + std::to_string(dead_pid()) + "-3d";
  for (const auto& name : {dead, live, other}) std::ofstream(dir / name) << "partial";
  write_file_atomic(dir / "out.csv", "whole\n");
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{other, "out.csv", live}));  // sorted
}

TEST(Plot, AFailedPlotLeavesNoTemporaryFile) {
  const fs::path dir = fresh_dir("plot_failed");
  const std::string warning = plot_to_file("plot $nosuchblock using 1:2", dir / "p.png");
  EXPECT_FALSE(warning.empty());
  EXPECT_TRUE(names_in(dir).empty());
}

// Issue 41: an output is written as a new regular file, so a path that is something else (a link, a FIFO, a
// folder) is refused, naming what it is, and left as it was.
TEST(AtomicFile, RefusesToReplaceWhatIsNotARegularFile) {
  const fs::path dir = fresh_dir("atomic_not_regular");
  std::ofstream(dir / "target.csv") << "kept\n";
  fs::create_symlink(dir / "target.csv", dir / "link.csv");
  ASSERT_EQ(mkfifo((dir / "fifo.csv").c_str(), 0600), 0);
  fs::create_directory(dir / "folder.csv");
  const std::pair<const char*, const char*> cases[] = {
      {"link.csv", "a symbolic link"}, {"fifo.csv", "a FIFO"}, {"folder.csv", "a folder"}};
  for (const auto& [name, kind] : cases) {
    std::string message;
    try {
      AtomicFile file(dir / name);
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_NE(message.find(std::string("exists and is ") + kind), std::string::npos) << name << ": " << message;
  }
  EXPECT_TRUE(fs::is_symlink(dir / "link.csv"));
  EXPECT_TRUE(fs::is_fifo(dir / "fifo.csv"));
  AtomicFile regular(dir / "target.csv");  // a regular file, and an absent path, are outputs as before
  regular.stream() << "new\n";
  regular.commit();
  AtomicFile fresh(dir / "absent.csv");
  fresh.commit();
  EXPECT_EQ(fs::file_size(dir / "target.csv"), 4u);
}

// The same file under two spellings (./, .., a linked folder) is an input the output would overwrite.
TEST(AtomicFile, AnOutputThatIsAnInputIsRefused) {
  const fs::path dir = fresh_dir("atomic_input");
  std::ofstream(dir / "log.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  fs::create_directory(dir / "sub");
  fs::create_directory_symlink(dir, dir / "sub" / "up");
  for (const fs::path& output :
       {dir / "log.csv", dir / "." / "log.csv", dir / "sub" / ".." / "log.csv", dir / "sub" / "up" / "log.csv"}) {
    std::string message;
    try {
      refuse_output_over_input(output, "--by-request", dir / "log.csv", "request log");
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_NE(message.find("is also this run's request log"), std::string::npos) << output << ": " << message;
  }
  EXPECT_NO_THROW(refuse_output_over_input(dir / "requests.csv", "--by-request", dir / "log.csv", "request log"));
  EXPECT_NO_THROW(refuse_output_over_input("", "--by-request", dir / "log.csv", "request log"));
}

// check-outputs never opens what is not a regular file named relative to the manifest: a device named absolutely or
// through "..", and a FIFO beside the manifest (which would block for ever) are listed unread.
TEST(RunManifest, CheckReadsOnlyRegularFilesNamedRelatively) {
  const fs::path dir = fresh_dir("manifest_hostile");
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::string up;
  for (const auto& part : fs::absolute(dir))
    if (part != "/") up += "../";
  std::ofstream(dir / "manifest.json")
      << R"({"schema": "llmco2-run-manifest/1", "run_id": "x", "command": [], "written_utc": "", "outputs": [)"
      << R"({"name": "/dev/zero", "size_bytes": 1, "fnv1a64": "0"},)"
      << R"({"name": ")" << up << R"(dev/zero", "size_bytes": 1, "fnv1a64": "0"},)"
      << R"({"name": "fifo", "size_bytes": 1, "fnv1a64": "0"}]})";
  const std::vector<std::string> stale = stale_outputs(dir / "manifest.json");
  ASSERT_EQ(stale.size(), 3u);
  EXPECT_NE(stale[0].find("not a name relative to the manifest's folder"), std::string::npos) << stale[0];
  EXPECT_NE(stale[1].find("not a regular file (not read)"), std::string::npos) << stale[1];
  EXPECT_NE(stale[2].find("not a regular file (not read)"), std::string::npos) << stale[2];
}

TEST(RunManifest, ANameLeadingToAnEndlessFileIsStaleWithoutReadingIt) {
  // /proc/self/pagemap is a regular file of size 0 on disk that reads for gigabytes (8 bytes per page of the address
  // space): check-outputs read it to its end. Now the size on disk is compared first and at most one byte more than
  // the manifest's size is read.
  const fs::path dir = fresh_dir("manifest_endless");
  std::string up;
  for (const auto& part : fs::absolute(dir))
    if (part != "/") up += "../";
  std::ofstream(dir / "out.csv") << "a,b\n";
  std::ofstream(dir / "manifest.json")
      << R"({"schema": "llmco2-run-manifest/1", "run_id": "x", "command": [], "written_utc": "", "outputs": [)"
      << R"({"name": ")" << up << R"(proc/self/pagemap", "size_bytes": 0, "fnv1a64": "0"},)"
      << R"({"name": "out.csv", "size_bytes": 4, "fnv1a64": ")" << checksum_hex(digest_file(dir / "out.csv").fnv1a64)
      << R"("}, {"name": "out.csv", "size_bytes": 1e300, "fnv1a64": "0"}]})";
  const std::vector<std::string> stale = stale_outputs(dir / "manifest.json");
  ASSERT_EQ(stale.size(), 2u);  // out.csv as written is not stale
  EXPECT_NE(stale[0].find("pagemap: differs from the manifest"), std::string::npos) << stale[0];
  EXPECT_NE(stale[1].find("out.csv: differs from the manifest"), std::string::npos) << stale[1];
  EXPECT_EQ(digest_file(dir / "out.csv", 2).size_bytes, 2u);  // a bounded read stops where asked
}

// A PNG ends with its 12-byte IEND chunk and an SVG with its closing tag; an image cut off by a full disk does not.
TEST(Plot, ACutOffImageIsNotWhole) {
  const fs::path dir = fresh_dir("plot_whole");
  const std::string signature("\x89PNG\r\n\x1a\n", 8), iend("\0\0\0\0IEND\xae\x42\x60\x82", 12);
  std::ofstream(dir / "whole.png", std::ios::binary) << signature << std::string(100, 'x') << iend;
  std::ofstream(dir / "cut.png", std::ios::binary) << signature << std::string(100, 'x') << iend.substr(0, 7);
  std::ofstream(dir / "whole.svg") << "<svg>\n</svg>\n\n";
  std::ofstream(dir / "cut.svg") << "<svg>\n<path d=\"M 0 0";
  EXPECT_TRUE(image_is_whole(dir / "whole.png", false));
  EXPECT_FALSE(image_is_whole(dir / "cut.png", false));
  EXPECT_TRUE(image_is_whole(dir / "whole.svg", true));
  EXPECT_FALSE(image_is_whole(dir / "cut.svg", true));
  EXPECT_FALSE(image_is_whole(dir / "absent.png", false));
}

}  // namespace
}  // namespace llmco2
