// The file sink's formats read back byte for byte: CSV with the column union of a batch, one header per file
// across batches and restarts, rotation; JSON the default.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sinks/rotating_file.h"
#include "sinks/sink.h"
#include "sink_fixtures.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using namespace std::chrono_literals;
using namespace gcm::sink_testing;
using gcm::testing::slurp;

class FileSinkFiles : public SinkFiles {};

TEST_F(FileSinkFiles, FileSinkFlattensAndSortsTheColumnUnionOfTheBatch) {
  auto sink = make_sink("file", {"file_path=" + path("out.csv"), "format=csv"}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 7, {{"k", Value("x,y")}, {"n", Value(Object{{"deep", Value(1.5)}})}}),
               rec(log_schema(), "c2", 8, {{"other", Value(List{Value(true), Value(false)})}})});
  sink->shutdown();
  // Header: the flattened keys of both records plus the schema's scalar fields ("gone" is null everywhere), sorted.
  EXPECT_EQ(slurp(path("out.csv")),
            "cluster,extra.k,extra.n.deep,extra.other.0,extra.other.1,gone,value\r\n"
            "c1,\"x,y\",1.5,,,,7\r\n"
            "c2,,,True,False,,8\r\n");
}

TEST_F(FileSinkFiles, TheHeaderIsWrittenOncePerFileAcrossBatchesAndRestarts) {
  for (int run = 0; run < 2; ++run) {  // a second process appending to the file of the first
    auto sink = make_sink("file", {"file_path=" + path("out.csv"), "format=csv"}, quick_retries(0));
    send(*sink, {rec(log_schema(), "r" + std::to_string(run), 1)});
    send(*sink, {rec(log_schema(), "s" + std::to_string(run), 2)});
  }
  EXPECT_EQ(
      slurp(path("out.csv")),
      "cluster,extra.k,gone,value\r\nr0,v\xc3\xa9,,1\r\ns0,v\xc3\xa9,,2\r\nr1,v\xc3\xa9,,1\r\ns1,v\xc3\xa9,,2\r\n");
}

TEST_F(FileSinkFiles, ABatchWithFewerColumnsGoesUnderTheHeaderInItsOrder) {
  auto sink = make_sink("file", {"file_path=" + path("out.csv"), "format=csv"}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1)});
  send(*sink, {rec(log_schema(), "c2", 2, {})});  // no extra.k in this batch
  EXPECT_EQ(slurp(path("out.csv")), "cluster,extra.k,gone,value\r\nc1,v\xc3\xa9,,1\r\nc2,,,2\r\n");
}

TEST_F(FileSinkFiles, NewColumnsStartANewFileWithTheUnionSoEveryFileIsOneTable) {
  auto sink = make_sink("file", {"file_path=" + path("out.csv"), "format=csv"}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1, {})});
  Record o(other_schema());
  o[0] = "c2";
  o[1] = 1000;
  send(*sink, {o});                               // another record type: a "user" column
  send(*sink, {rec(log_schema(), "c3", 3, {})});  // the first type again: fits the union
  send(*sink, {o});
  EXPECT_EQ(slurp(path("out.csv.1")), "cluster,gone,value\r\nc1,,1\r\n");
  EXPECT_EQ(slurp(path("out.csv")), "cluster,gone,user,value\r\nc2,,1000,\r\nc3,,,3\r\nc2,,1000,\r\n");
  EXPECT_FALSE(std::filesystem::exists(path("out.csv.2"))) << "one rotation, then the union fits both";
}

TEST_F(FileSinkFiles, SizeRotationStartsEveryFileWithTheHeader) {
  auto sink = make_sink("file", {"file_path=" + path("out.csv"), "format=csv", "max_bytes=60"}, quick_retries(0));
  // A 20-byte header and 14-byte rows: two rows per file.
  for (int i = 0; i < 6; ++i) send(*sink, {rec(log_schema(), "cluster-" + std::to_string(i), i, {})});
  EXPECT_EQ(slurp(path("out.csv.2")), "cluster,gone,value\r\ncluster-0,,0\r\ncluster-1,,1\r\n");
  EXPECT_EQ(slurp(path("out.csv.1")), "cluster,gone,value\r\ncluster-2,,2\r\ncluster-3,,3\r\n");
  EXPECT_EQ(slurp(path("out.csv")), "cluster,gone,value\r\ncluster-4,,4\r\ncluster-5,,5\r\n");
}

TEST_F(FileSinkFiles, JsonStaysTheDefaultAndAnUnknownFormatIsAUsageError) {
  auto sink = make_sink("file", {"file_path=" + path("out.jsonl")}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 7)});
  EXPECT_EQ(slurp(path("out.jsonl")), "{\"cluster\":\"c1\",\"value\":7,\"extra\":{\"k\":\"v\xc3\xa9\"}}\n");
  EXPECT_NE(usage_error("file", {"file_path=" + path("x"), "format=xml"}).find("format 'xml' is not one of json, csv"),
            std::string::npos);
}

TEST_F(FileSinkFiles, FileSinkRoutesCsvByIdentifierToo) {
  static const Schema job = [] {
    Schema s = make_schema("Job", "", "job", DataType::Log, {{"JOBID", FieldType::String}});
    s.identifier = DataIdentifier::Job;
    return s;
  }();
  auto sink = make_sink("file", {"job_file_path=" + path("jobs.csv"), "file_path=" + path("rest.csv"), "format=csv"},
                        quick_retries(0));
  Record j(job);
  j[0] = "42";
  send(*sink, {j});
  send(*sink, {rec(log_schema(), "c1", 1, {})});
  EXPECT_EQ(slurp(path("jobs.csv")), "JOBID\r\n42\r\n");
  EXPECT_EQ(slurp(path("rest.csv")), "cluster,gone,value\r\nc1,,1\r\n");
}

}  // namespace
}  // namespace gcm
