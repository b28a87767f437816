// Tests of CSV parsing: quoting, embedded newlines, line numbers, escaping round trip.
#include <gtest/gtest.h>

#include <sstream>

#include "core/csv.h"
#include "core/error.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

TEST(Csv, ParsesQuotedFieldsAndKeepsTheLineOfEachRecord) {
  const CsvTable t = parse_csv("a,b\n1,\"x, \"\"y\"\"\"\n\"multi\nline\",2\n3,\n", "t.csv");
  ASSERT_EQ(t.header, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(t.records.size(), 3u);
  EXPECT_EQ(t.records[0].cells[1], "x, \"y\"");
  EXPECT_EQ(t.records[0].line, 2);
  EXPECT_EQ(t.records[1].cells[0], "multi\nline");
  EXPECT_EQ(t.records[1].line, 3);
  EXPECT_EQ(t.records[2].line, 5);  // the quoted newline took line 4
  EXPECT_EQ(t.records[2].cells, (std::vector<std::string>{"3", ""}));
}

TEST(Csv, HandlesCrLfAndAByteOrderMark) {
  const CsvTable t = parse_csv("\xEF\xBB\xBFx,y\r\n1,2\r\n", "t.csv");
  EXPECT_EQ(t.header[0], "x");
  EXPECT_EQ(t.records[0].cells[1], "2");
}

// One row looked up by its first cell: a quoted cell holding a line break and a look-alike "fra,..." line inside its
// quotes must be stepped over, the id matches in any case, and the row keeps its own line of the file (here 5: the
// header is line 1, the quoted cell spans lines 3-4).
TEST(Csv, ParsesTheOneRowAFirstCellNames) {
  const std::string text =
      "id,ci,note\nUSA,369.5,plain\nDEU,\"380\",\"two\nfra,1,lines\"\nFRA,56,\"a \"\"quoted\"\", cell\"\n";
  const auto table = parse_csv_row(text, "r.csv", "fra");
  ASSERT_TRUE(table.has_value());
  EXPECT_EQ(table->header, (std::vector<std::string>{"id", "ci", "note"}));
  ASSERT_EQ(table->records.size(), 1u);
  EXPECT_EQ(table->records[0].cells, (std::vector<std::string>{"FRA", "56", "a \"quoted\", cell"}));
  EXPECT_EQ(table->records[0].line, 5);
  EXPECT_EQ(table->source, "r.csv");
  EXPECT_EQ(parse_csv_row(text, "r.csv", "deu")->records[0].line, 3);
  EXPECT_FALSE(parse_csv_row(text, "r.csv", "fr").has_value());   // a prefix of an id is not the id
  EXPECT_FALSE(parse_csv_row(text, "r.csv", "id").has_value());   // the header is not a row
  EXPECT_FALSE(parse_csv_row(text, "r.csv", "two").has_value());  // inside a quoted cell
  EXPECT_FALSE(parse_csv_row("id,ci\n", "r.csv", "fra").has_value());
}

// parse_csv reads from memory, CsvReader from a stream (request logs): the same text gives the same records.
TEST(Csv, StreamAndMemoryReadersGiveTheSameRecords) {
  const std::string text =
      "\xEF\xBB\xBF"
      "a,b\r\n1,\"x, \"\"y\"\"\"\n\n\"multi\nline\",2\n3,";
  std::istringstream in(text);
  CsvReader stream(in, "t.csv");
  std::vector<CsvTable::Record> records;
  while (auto record = stream.next()) records.push_back(*record);
  const CsvTable t = parse_csv(text, "t.csv");
  ASSERT_EQ(records.size(), t.records.size() + 1);
  EXPECT_EQ(records[0].cells, (std::vector<std::string>{"a", "b"}));  // the BOM skipped by both
  EXPECT_EQ(t.header, records[0].cells);
  for (size_t i = 0; i < t.records.size(); ++i) {
    EXPECT_EQ(t.records[i].cells, records[i + 1].cells) << i;
    EXPECT_EQ(t.records[i].line, records[i + 1].line) << i;
  }
  EXPECT_EQ(t.records[1].line, 4);  // after the blank line 3
  EXPECT_EQ(t.records[2].cells, (std::vector<std::string>{"3", ""}));
}

TEST(Csv, RejectsAnUnterminatedQuoteWithItsLine) {
  try {
    parse_csv("a\n\"open\n", "bad.csv");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "bad.csv:2: unterminated quoted field");
  }
}

TEST(Csv, EscapeRoundTrips) {
  const std::vector<std::string> cells{"plain", "a,b", "say \"hi\"", "two\nlines", " padded "};
  std::string text;
  append_csv_record(text, cells);
  EXPECT_EQ(text, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\" padded \"\n");
  const CsvTable t = parse_csv("h1,h2,h3,h4,h5\n" + text, "t");
  EXPECT_EQ(t.records[0].cells, cells);
}

TEST(Csv, MissingColumnIsAnErrorNamingTheFile) {
  const CsvTable t = parse_csv("a\n1\n", "f.csv");
  EXPECT_THROW(t.column("b"), Error);
  EXPECT_EQ(t.column("a"), 0u);
}

}  // namespace
}  // namespace llmco2
