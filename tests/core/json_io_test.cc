// Tests of the JSON member scan: slices worked out by hand, and the malformed texts it must refuse.
#include <gtest/gtest.h>

#include "core/json_io.h"

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
}

TEST(JsonObjectMembers, RefusesWhatIsNotAPlainObject) {
  for (const char* bad : {"[1]", "{\"a\": [1}", "{\"a\": 1} x", "{\"a\": \"open}", "{\"a\" 1}", "{\"a\": }",
                          "{\"a\": 1,}", "{\"k\\u0041\": 1}", "{\"a\": 1", "", "{\"a\": {\"b\": [}]}"})
    EXPECT_FALSE(json_object_members(bad).has_value()) << bad;
}

}  // namespace
}  // namespace llmco2
