// CSV as Python's csv module writes it, and a CSV file that does not start with a header left alone.
#include "sinks/csv_table.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sinks/sink.h"
#include "sink_fixtures.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using namespace std::chrono_literals;
using namespace gcm::sink_testing;
using gcm::testing::slurp;

class CsvTableFiles : public SinkFiles {};

TEST(Csv, CellsAreWrittenAsPythonsCsvModuleWritesThem) {
  EXPECT_EQ(csv_cell(Value()), "");
  EXPECT_EQ(csv_cell(Value(true)), "True");
  EXPECT_EQ(csv_cell(Value(false)), "False");
  EXPECT_EQ(csv_cell(Value(-12)), "-12");
  EXPECT_EQ(csv_cell(Value(1.0)), "1.0");
  EXPECT_EQ(csv_cell(Value(0.1)), "0.1");
  EXPECT_EQ(csv_cell(Value(1e20)), "1e+20");
  EXPECT_EQ(csv_cell(Value("a\xff")), "a\xef\xbf\xbd") << "invalid UTF-8 replaced";
  EXPECT_EQ(csv_cell(Value(List{Value(1), Value("x")})), "[1,\"x\"]");
  EXPECT_EQ(csv_record({"plain", "with,comma", "with \"quote\"", "two\nlines", ""}),
            "plain,\"with,comma\",\"with \"\"quote\"\"\",\"two\nlines\",\r\n");
  EXPECT_EQ(csv_record({""}), "\"\"\r\n") << "a lone empty field is not a blank line";
  bool ok = false;
  EXPECT_EQ(parse_csv_record("a,\"b,c\",\"d\"\"e\",", ok), (std::vector<std::string>{"a", "b,c", "d\"e", ""}));
  EXPECT_TRUE(ok);
  parse_csv_record("a,\"b", ok);
  EXPECT_FALSE(ok);
}

TEST_F(CsvTableFiles, AFileThatDoesNotStartWithAHeaderIsLeftAloneAndANewOneStarted) {
  std::ofstream(path("t.csv")) << "\"broken\n";
  CsvFile f(path("t.csv"), 0, 1, CsvColumnOrder::Sorted, nullptr);
  f.append({"b", "a"}, {{"2", "1"}});
  EXPECT_EQ(slurp(path("t.csv.1")), "\"broken\n");
  EXPECT_EQ(slurp(path("t.csv")), "a,b\r\n1,2\r\n");
}

}  // namespace
}  // namespace gcm
