// Tests of the JSON member scan (slices worked out by hand, the malformed texts it must refuse) and of the fast
// parser: values and types worked out by hand, and equal to nlohmann's parse on every bundled and test JSON file,
// on mutations of them and on random numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "core/error.h"
#include "core/input_file.h"
#include "core/json_io.h"
#include "core/paths.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

TEST(JsonObjectMembers, SlicesEachValueWithoutParsingIt) {
  const std::string text = " {\"a\": {\"x\": [1, \"}]\"]}, \"b\" : \"s\\\"q\",\n \"c\":3.5e2, \"d\": null, \"e\": []} ";
  const auto members = json_object_members(text);
  ASSERT_TRUE(members.has_value());
  ASSERT_EQ(members->size(), 5u);
  EXPECT_EQ((*members)[0].first, "a");
  EXPECT_EQ((*members)[0].second, "{\"x\": [1, \"}]\"]}");  // the brackets inside the string do not close it
  EXPECT_EQ((*members)[1].first, "b");
  EXPECT_EQ((*members)[1].second, "\"s\\\"q\"");  // an escaped quote does not end the string
  EXPECT_EQ((*members)[2].second, "3.5e2");
  EXPECT_EQ((*members)[3].second, "null");
  EXPECT_EQ((*members)[4].second, "[]");
  EXPECT_EQ(Json::parse((*members)[0].second)["x"][1], "}]");
  EXPECT_TRUE(json_object_members("{}")->empty());
  // an even run of backslashes before a quote escapes only themselves; an odd one the quote too
  const auto escapes = json_object_members(R"({"a": "x\\", "b": "y\\\"}\\\\", "c": "\\\\\\\\"})");
  ASSERT_TRUE(escapes.has_value());
  ASSERT_EQ(escapes->size(), 3u);
  EXPECT_EQ((*escapes)[0].second, R"("x\\")");
  EXPECT_EQ((*escapes)[1].second, R"("y\\\"}\\\\")");
  EXPECT_EQ((*escapes)[2].second, R"("\\\\\\\\")");
  EXPECT_FALSE(json_object_members(R"({"a": "x\"})").has_value());  // the string never closes
}

TEST(JsonObjectMembers, RefusesWhatIsNotAPlainObject) {
  for (const char* bad : {"[1]", "{\"a\": [1}", "{\"a\": 1} x", "{\"a\": \"open}", "{\"a\" 1}", "{\"a\": }",
                          "{\"a\": 1,}", "{\"k\\u0041\": 1}", "{\"a\": 1", "", "{\"a\": {\"b\": [}]}"})
    EXPECT_FALSE(json_object_members(bad).has_value()) << bad;
}

// `j` with each value's type: nlohmann's == takes 1 (unsigned) and 1.0 (double) as equal, and -0.0 as 0.0; the dump
// tells them apart, and the tags tell nlohmann's unsigned from its signed integers.
std::string typed(const Json& j) {
  if (j.is_object()) {
    std::string out = "{";
    for (const auto& [key, value] : j.items()) out += Json(key).dump() + ":" + typed(value) + ",";
    return out + "}";
  }
  if (j.is_array()) {
    std::string out = "[";
    for (const auto& value : j) out += typed(value) + ",";
    return out + "]";
  }
  return std::string(j.type_name()) +
         (j.is_number_unsigned()  ? "u"
          : j.is_number_integer() ? "i"
                                  : "") +
         ":" + j.dump();
}

// Whether the fast parser, where it takes `text`, gives nlohmann's document.
void expect_as_nlohmann(const std::string& text, const std::string& what) {
  const std::optional<Json> fast = parse_json_fast(text);
  if (!fast) return;
  Json reference;
  ASSERT_NO_THROW(reference = Json::parse(text)) << what << ": the fast parser took text nlohmann refuses";
  EXPECT_EQ(typed(*fast), typed(reference)) << what;
}

TEST(JsonParseFast, ValuesAndTypesWorkedOutByHand) {
  const auto j = parse_json_fast(
      " {\"u\": 5, \"i\": -5, \"z\": -0, \"max\": 18446744073709551615, \"min\": -9223372036854775808, "
      "\"f\": 0.1, \"e\": 1E2, \"nz\": -0.0, \"s\": \"a\\\"b\\\\c\\/d\\n\\t\\u00e9\", "
      "\"utf8\": \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\", \"l\": [true, false, null, [], {}], \"u\": 6}\n");
  EXPECT_FALSE(j.has_value());  // \\u is left to nlohmann
  const auto k = parse_json_fast(
      " {\"u\": 5, \"i\": -5, \"z\": -0, \"max\": 18446744073709551615, \"min\": -9223372036854775808, "
      "\"f\": 0.1, \"e\": 1E2, \"nz\": -0.0, \"s\": \"a\\\"b\\\\c\\/d\\n\\t\", "
      "\"utf8\": \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\", \"l\": [true, false, null, [], {}], \"u\": 6}\n");
  ASSERT_TRUE(k.has_value());
  EXPECT_TRUE((*k)["u"].is_number_unsigned());
  EXPECT_EQ((*k)["u"].get<unsigned>(), 6u);  // a repeated key: the last value
  EXPECT_TRUE((*k)["i"].is_number_integer() && !(*k)["i"].is_number_unsigned());
  EXPECT_EQ((*k)["i"].get<int>(), -5);
  EXPECT_TRUE((*k)["z"].is_number_integer() && !(*k)["z"].is_number_unsigned());
  EXPECT_EQ((*k)["max"].get<std::uint64_t>(), 18446744073709551615u);
  EXPECT_EQ((*k)["min"].get<std::int64_t>(), INT64_MIN);
  EXPECT_TRUE((*k)["f"].is_number_float());
  EXPECT_EQ((*k)["f"].get<double>(), 0x1.999999999999ap-4);  // the double nearest 0.1
  EXPECT_EQ((*k)["e"].get<double>(), 100.0);
  EXPECT_TRUE((*k)["e"].is_number_float());
  EXPECT_TRUE(std::signbit((*k)["nz"].get<double>()));
  EXPECT_EQ((*k)["s"].get<std::string>(), "a\"b\\c/d\n\t");
  EXPECT_EQ((*k)["utf8"].get<std::string>(), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ((*k)["l"].dump(), "[true,false,null,[],{}]");
  EXPECT_EQ(k->size(), 11u);
  EXPECT_EQ(parse_json_fast("[1, 2.5, \"x\"]")->dump(), "[1,2.5,\"x\"]");
  EXPECT_EQ(parse_json_fast("7")->get<int>(), 7);
}

TEST(JsonParseFast, LeavesToNlohmannWhatItDoesNotTake) {
  const std::string deep = std::string(65, '[') + std::string(65, ']');
  for (const std::string& text : {std::string("{\"a\": 1,}"),
                                  std::string("[1 2]"),
                                  std::string("{\"a\" 1}"),
                                  std::string(""),
                                  std::string(" "),
                                  std::string("01"),
                                  std::string("1."),
                                  std::string(".5"),
                                  std::string("1e"),
                                  std::string("-"),
                                  std::string("+1"),
                                  std::string("tru"),
                                  std::string("nul"),
                                  std::string("[1] x"),
                                  std::string("\"a\tb\""),
                                  std::string("\"\\x\""),
                                  std::string("\"open"),
                                  std::string("\"\xc0\x80\""),
                                  std::string("\"\xed\xa0\x80\""),
                                  std::string("\"\xf5\x80\x80\x80\""),
                                  std::string("\"\xe2\x82\""),
                                  std::string("\xef\xbb\xbf{}"),
                                  std::string("18446744073709551616"),
                                  std::string("-9223372036854775809"),
                                  std::string("1e999"),
                                  std::string("-1e999"),
                                  std::string("[NaN]"),
                                  deep})
    EXPECT_FALSE(parse_json_fast(text).has_value()) << text;
  EXPECT_TRUE(parse_json_fast(std::string(64, '[') + std::string(64, ']')).has_value());
  // parse_json_text's answers for them are nlohmann's: a value where it takes the text, its error where not
  EXPECT_TRUE(parse_json_text("18446744073709551616", "t").is_number_float());
  EXPECT_EQ(parse_json_text("\"\\u00e9\"", "t").get<std::string>(), "\xc3\xa9");
  EXPECT_EQ(parse_json_text("\xef\xbb\xbf{}", "t").dump(), "{}");
  EXPECT_THROW(parse_json_text("1e999", "t"), Error);
  EXPECT_THROW(parse_json_text("{\"a\": 1,}", "t"), Error);
  EXPECT_THROW(parse_json_text(deep, "t"), Error);
}

std::vector<std::filesystem::path> json_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& root :
       {data_dir(), std::filesystem::path(LLMCO2_TESTDATA), std::filesystem::path(LLMCO2_FUZZ_CORPUS)})
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
      if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  return files;
}

TEST(JsonParseFast, EqualsNlohmannOnEveryJsonFileAndItsMutations) {
  const auto files = json_files();
  ASSERT_GT(files.size(), 150u);  // data/ (122), tests/testdata and the fuzz corpus
  std::mt19937 random(17);
  int taken = 0;
  for (const auto& file : files) {
    const std::string text = read_input_file(file, 1 << 26, "JSON file");
    if (parse_json_fast(text)) ++taken;
    expect_as_nlohmann(text, file.string());
    for (int i = 0; i < 20 && !text.empty(); ++i) {
      std::string mutated = text;
      const size_t at = random() % mutated.size();
      const char bytes[] = {'"', '\\', '{', '}', '[', ']', ',', ':', '-', '0', '9', 'e', '.', ' ', '\x01', '\xff'};
      if (i % 3 == 0) mutated.erase(at, 1 + random() % 3);
      else mutated[at] = bytes[random() % sizeof bytes];
      expect_as_nlohmann(mutated, file.string() + " mutated at " + std::to_string(at));
    }
  }
  EXPECT_GT(taken, static_cast<int>(files.size()) * 3 / 4);  // the fast path is the usual one
}

TEST(JsonParseFast, EqualsNlohmannOnRandomNumbers) {
  std::mt19937_64 random(3);
  char text[64];
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t bits = random();
    double value;
    std::memcpy(&value, &bits, sizeof value);
    if (!std::isfinite(value)) continue;
    const char* formats[] = {"%.17g", "%.3g", "%.6e", "%.0f"};
    std::snprintf(text, sizeof text, formats[i % 4], value);
    expect_as_nlohmann(text, text);
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(bits) >> (i % 64));
    expect_as_nlohmann(text, text);
    std::snprintf(text, sizeof text, "%llue%d", static_cast<unsigned long long>(bits % 100000),
                  static_cast<int>(i % 700) - 350);
    expect_as_nlohmann(text, text);
  }
}

}  // namespace
}  // namespace llmco2
