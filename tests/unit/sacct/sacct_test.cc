// sacct_publish, sacct_running, fsacct and sacct_backfill's pieces against the reference's sacct fixtures
// (../shared/fixtures/gcm/sample-sacct-*, gcm-reference.md §1.13-§1.16, §7.1) and the reference's expectations.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collectors/loop.h"
#include "core/json.h"
#include "sacct/backfill.h"
#include "sacct/date_expr.h"
#include "sacct/fsacct.h"
#include "sacct/publish.h"
#include "sacct/sacct_records.h"
#include "sacct/sacct_running.h"
#include "slurm/client.h"
#include "slurm/delimited.h"
#include "slurm/parse_error.h"

namespace gcm::sacct {
namespace {

const std::string kFixtures = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm";

std::string read_fixture(const std::string& name) {
  std::ifstream in(kFixtures + "/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

#define REQUIRE_FIXTURE(name)                             \
  if (!std::filesystem::exists(kFixtures + "/" + (name))) \
  GTEST_SKIP() << "reference fixture " << (name) << " not present"
#define REQUIRE_LA() \
  if (!std::filesystem::exists("/usr/share/zoneinfo/America/Los_Angeles")) GTEST_SKIP() << "no zoneinfo"

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  slurm::for_each_line(text, [&](std::string_view l) { out.emplace_back(l); });
  return out;
}

struct Captured : RecordOut {
  std::vector<nlohmann::json> records;
  void emit(const Record& r) override { records.push_back(nlohmann::json::parse(to_json(r))); }
};

// A sink that keeps each chunk's records as a compact JSON list.
struct ChunkSink : Sink {
  std::vector<std::string> chunks;
  void begin_chunk(const BatchInfo&) override { chunks.emplace_back("["); }
  void write(const Record& r) override {
    if (chunks.back().size() > 1) chunks.back() += ",";
    chunks.back() += to_json(r);
  }
  void end_chunk() override { chunks.back() += "]"; }
};

PublishOptions la_options(const std::string& delimiter) {
  PublishOptions o;
  o.delimiter = delimiter;
  o.naive_zone = o.sacct_zone = o.end_ds_zone = TimeZone::load("America/Los_Angeles");
  o.cluster = "testcluster";
  o.time = 1700000000;
  return o;
}

void publish_text(SacctPublisher& p, const std::string& text, RecordOut& out) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    size_t at = 0;
    while (at < text.size()) {
      ssize_t n = ::write(fds[1], text.data() + at, text.size() - at);
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
    ::close(fds[1]);
  });
  try {
    p.run(fds[0], out);
  } catch (...) {
    ::close(fds[0]);
    writer.join();
    throw;
  }
  ::close(fds[0]);
  writer.join();
}

// --- sacct_publish (§1.14) ---

TEST(SacctPublish, SampleOutputGives68PayloadsOfNov16) {
  REQUIRE_FIXTURE("sample-sacct-output.txt");
  REQUIRE_LA();
  std::string text = read_fixture("sample-sacct-output.txt");
  std::vector<std::string> header;
  for (auto h : lines_of(text)) {
    std::stringstream ss(h);
    std::string f;
    while (std::getline(ss, f, '|')) header.push_back(f);
    break;
  }
  SacctPublisher p(la_options("|"), nullptr);
  Captured out;
  publish_text(p, text, out);
  ASSERT_EQ(out.records.size(), 68u);
  for (const auto& r : out.records) {
    EXPECT_EQ(r["end_ds"], "2020-11-16");
    EXPECT_EQ(r["time"], 1700000000);
    EXPECT_EQ(r["cluster"], "testcluster");
    EXPECT_EQ(r["derived_cluster"], "testcluster");
    std::vector<std::string> keys;
    for (auto& [k, v] : r["sacct"].items()) {
      keys.push_back(k);
      EXPECT_TRUE(v.is_string()) << k;
    }
    std::vector<std::string> sorted_header = header;
    std::sort(sorted_header.begin(), sorted_header.end());
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, sorted_header);
    // Times carry the sacct zone's offset; End is re-emitted as ISO.
    EXPECT_EQ(r["sacct"]["End"].get<std::string>().substr(0, 10), "2020-11-16");
    EXPECT_TRUE(r["sacct"]["End"].get<std::string>().ends_with("-08:00")) << r["sacct"]["End"];
  }
  EXPECT_EQ(p.stats().lines, 69u);
  EXPECT_EQ(p.stats().invalid_lines, 0u);
}

TEST(SacctPublish, ChunkingKeepsEveryChunkWithinTheLimit) {
  REQUIRE_FIXTURE("sample-sacct-output.txt");
  REQUIRE_LA();
  std::string text = read_fixture("sample-sacct-output.txt");
  // Sizes measured on the records, and sizes the publisher computes from the lines (what sacct_publish uses).
  for (bool publisher_sizes : {false, true})
    for (int64_t limit : {int64_t{500000}, int64_t{1000000}, int64_t{20000}, int64_t{0}}) {
      ChunkSink sink;
      BatchInfo info;
      info.schema = &sacct_payload_schema();
      ChunkWriter w(sink, info, limit);
      SacctPublisher p(la_options("|"), nullptr);
      if (publisher_sizes) w.size_from([&p](const Record&) { return p.last_record_size(); });
      publish_text(p, text, w);
      w.finish();
      size_t total = 0;
      for (const auto& c : sink.chunks) {
        if (limit) {
          EXPECT_LE(static_cast<int64_t>(c.size()), limit);
        }
        total += nlohmann::json::parse(c).size();
      }
      EXPECT_EQ(total, 68u) << limit;
      if (limit == 0 || limit >= 500000) {
        EXPECT_EQ(sink.chunks.size(), 1u) << limit;  // 68 records are about 190 kB
      } else {
        EXPECT_GT(sink.chunks.size(), 1u);
      }
    }
}

TEST(SacctPublish, InvalidLineFailsNamingItOrIsSkippedAndCounted) {
  REQUIRE_FIXTURE("sample-sacct-output-with-invalid-lines.txt");
  REQUIRE_LA();
  std::string text = read_fixture("sample-sacct-output-with-invalid-lines.txt");
  {
    SacctPublisher p(la_options("|"), nullptr);
    Captured out;
    try {
      publish_text(p, text, out);
      FAIL() << "no error";
    } catch (const PublishError& e) {
      EXPECT_EQ(e.line(), 2u);
      EXPECT_NE(std::string(e.what()).find("Invalid input on line 2"), std::string::npos) << e.what();
    }
  }
  PublishOptions o = la_options("|");
  o.ignore_line_errors = true;
  SacctPublisher p(o, nullptr);
  Captured out;
  publish_text(p, text, out);
  EXPECT_EQ(out.records.size(), 0u);
  EXPECT_EQ(p.stats().invalid_lines, 1u);
  EXPECT_EQ(p.stats().invalid_line_numbers, std::vector<uint64_t>{2});
  EXPECT_NE(p.invalid_summary().find("2 ("), std::string::npos) << p.invalid_summary();
}

TEST(SacctPublish, InvalidLinesAmongValidOnesAreCountedByNumber) {
  REQUIRE_LA();
  std::string text =
      "JobID|State|End\n1|COMPLETED|2021-04-07T10:00:00\nbroken\n2|FAILED|Unknown\n3|COMPLETED|2021-04-08T01:00:00\n";
  PublishOptions o = la_options("|");
  o.ignore_line_errors = true;
  SacctPublisher p(o, nullptr);
  Captured out;
  publish_text(p, text, out);
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[0]["sacct"]["JobID"], "1");
  EXPECT_EQ(out.records[0]["sacct"]["End"], "2021-04-07T10:00:00-07:00");
  EXPECT_EQ(out.records[1]["end_ds"], "2021-04-08");
  EXPECT_EQ(p.stats().invalid_line_numbers, (std::vector<uint64_t>{3, 4}));
}

TEST(SacctPublish, InvalidUtf8StrictNamesLineAndOffsetIgnoreDropsReplaceSubstitutes) {
  REQUIRE_LA();
  std::string text = "JobID|JobName|End\n1|ok|2021-04-07T10:00:00\n2|bad\xff name|2021-04-07T11:00:00\n";
  {
    SacctPublisher p(la_options("|"), nullptr);
    Captured out;
    try {
      publish_text(p, text, out);
      FAIL() << "no error";
    } catch (const PublishError& e) {
      EXPECT_EQ(e.line(), 3u);
      std::string m = e.what();
      EXPECT_NE(m.find("line 3"), std::string::npos) << m;
      EXPECT_NE(m.find("byte offset 48"), std::string::npos) << m;  // 18 + 25 + 5
      EXPECT_NE(m.find("'utf-8' codec can't decode"), std::string::npos) << m;
    }
    EXPECT_EQ(out.records.size(), 1u);  // the line before it was delivered
  }
  for (auto mode : {Utf8Errors::Ignore, Utf8Errors::Replace}) {
    PublishOptions o = la_options("|");
    o.io_errors = mode;
    SacctPublisher p(o, nullptr);
    Captured out;
    publish_text(p, text, out);
    ASSERT_EQ(out.records.size(), 2u);
    EXPECT_EQ(out.records[1]["sacct"]["JobName"], mode == Utf8Errors::Ignore ? "bad name" : "bad\xEF\xBF\xBD name");
    EXPECT_EQ(p.stats().utf8_fixed_lines, 1u);
  }
}

// The size the publisher computes for chunking is the compact JSON size, also for values that need escaping.
TEST(SacctPublish, RecordSizeIsTheCompactJsonSize) {
  REQUIRE_FIXTURE("sample-sacct-output.txt");
  REQUIRE_LA();
  struct SizeCheck : RecordOut {
    const SacctPublisher* p = nullptr;
    size_t checked = 0;
    void emit(const Record& r) override {
      EXPECT_EQ(p->last_record_size(), compact_json_size(r)) << to_json(r);
      ++checked;
    }
  };
  std::string text = read_fixture("sample-sacct-output.txt");
  text += "\n";
  std::string extra = "JobID|JobName|End|JobID\n1|\"quoted\" \\ and \u00e9 and \t|2021-04-07T10:00:00|9\n";
  for (const std::string* t : {&text, &extra}) {
    PublishOptions o = la_options("|");
    o.ignore_line_errors = true;
    o.heterogeneous_cluster_v1 = true;
    o.cluster = "we\"ird";
    SacctPublisher p(o, nullptr);
    SizeCheck out;
    out.p = &p;
    publish_text(p, *t, out);
    EXPECT_GT(out.checked, 0u);
  }
}

TEST(SacctPublish, ARecordIsMarkedPlainOnlyWhenNoneOfItsStringsNeedsEscaping) {
  // The JSON writers do not look at the strings of a marked record: marking one with a quote, a backslash, a
  // control character or non-ASCII (in a field, the cluster name or a key) would write broken JSON.
  REQUIRE_FIXTURE("sample-sacct-output.txt");
  REQUIRE_LA();
  struct MarkCheck : RecordOut {
    size_t marked = 0, unmarked = 0;
    void emit(const Record& r) override {
      Record scanned = r;
      scanned.strings_json_plain = false;
      EXPECT_EQ(to_json(r, true, JsonStyle::Python), to_json(scanned, true, JsonStyle::Python));
      ++(r.strings_json_plain ? marked : unmarked);
    }
  };
  std::string text = read_fixture("sample-sacct-output.txt");
  std::string mixed =
      "JobID|JobName|End\n1|plain|2021-04-07T10:00:00\n2|\"quoted\"|2021-04-07T10:00:00\n"
      "3|back\\slash|2021-04-07T10:00:00\n4|\u00e9|2021-04-07T10:00:00\n5|a\tb|2021-04-07T10:00:00\n"
      "6|plain again|2021-04-07T10:00:00\n";
  std::string odd_key = "JobID|Job\"Name|End\n1|plain|2021-04-07T10:00:00\n";
  struct Case {
    const std::string* text;
    std::string cluster;
    size_t marked, unmarked;
  };
  for (const Case& c : {Case{&text, "testcluster", 68, 0}, Case{&mixed, "testcluster", 2, 4},
                        Case{&odd_key, "testcluster", 0, 1}, Case{&text, "we\"ird", 0, 68}}) {
    PublishOptions o = la_options("|");
    o.cluster = c.cluster;
    SacctPublisher p(o, nullptr);
    MarkCheck out;
    publish_text(p, *c.text, out);
    EXPECT_EQ(out.marked, c.marked) << c.cluster << ": " << c.text->substr(0, 40);
    EXPECT_EQ(out.unmarked, c.unmarked) << c.cluster << ": " << c.text->substr(0, 40);
  }
}

TEST(SacctPublish, HeterogeneousClusterUsesClusterAndPartitionColumns) {
  REQUIRE_LA();
  std::string text =
      "JobID|Cluster|Partition|NodeList|End\n1|c1|gpu|n1|2021-04-07T10:00:00\n2|c1||h100-[1-2]|2021-04-07T10:00:00\n";
  PublishOptions o = la_options("|");
  o.heterogeneous_cluster_v1 = true;
  SacctPublisher p(o, nullptr);
  Captured out;
  publish_text(p, text, out);
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[0]["derived_cluster"], "c1.gpu");
  EXPECT_EQ(out.records[1]["derived_cluster"], "c1.h100");
  EXPECT_EQ(out.records[1]["cluster"], "testcluster");
}

TEST(SacctPublish, LinesSplitAcrossReadsAndALastLineWithoutNewline) {
  REQUIRE_LA();
  std::string text = "JobID|End\n";
  for (int i = 0; i < 50000; ++i) text += std::to_string(i) + "|2021-04-07T10:00:00\n";
  text += "last|2021-04-07T10:00:00";
  SacctPublisher p(la_options("|"), nullptr);
  Captured out;
  publish_text(p, text, out);
  ASSERT_EQ(out.records.size(), 50001u);
  EXPECT_EQ(out.records.back()["sacct"]["JobID"], "last");
  EXPECT_EQ(p.stats().bytes, text.size());
}

// --- sacct_running (§1.13, §1.7) ---

TEST(SacctRunning, MultilineRecordsComeOutOnceWithALiteralBackslashN) {
  REQUIRE_FIXTURE("sample-sacct-multiple-multiline.txt");
  for (const char* base : {"sample-sacct-one-multiline", "sample-sacct-multiple-multiline"}) {
    slurm::CannedSlurmClient client;
    client.set_output("sacct_running", read_fixture(std::string(base) + ".txt"));
    CollectorContext ctx;
    ctx.cluster = "c";
    Captured out;
    SacctRunningOptions o;
    SacctRunningStats st = collect_sacct_running(client, ctx, o, out);
    auto expected = lines_of(read_fixture(std::string(base) + "-expected.txt"));
    ASSERT_EQ(out.records.size(), expected.size() - 1) << base;
    EXPECT_EQ(st.skipped_rows, 0u);
    EXPECT_EQ(client.queries().at(0).argv, sacct_running_argv());
    bool joined = false;
    for (size_t i = 0; i < out.records.size(); ++i) {
      // Each record's SubmitLine is the expected line's SubmitLine.
      std::string submit = out.records[i]["SubmitLine"];
      EXPECT_NE(expected[i + 1].find(submit), std::string::npos) << submit;
      joined = joined || submit.find("\\n") != std::string::npos;
    }
    EXPECT_TRUE(joined) << base;
  }
}

TEST(SacctRunning, RunningOutputsGiveTypedRecords) {
  REQUIRE_FIXTURE("sample-sacct-running-output-large.txt");
  for (auto [name, rows] :
       {std::pair{"sample-sacct-running-output.txt", 10u}, std::pair{"sample-sacct-running-output-large.txt", 5040u}}) {
    slurm::CannedSlurmClient client;
    client.set_output("sacct_running", read_fixture(name));
    CollectorContext ctx;
    ctx.cluster = "c";
    ctx.heterogeneous_cluster_v1 = true;
    Captured out;
    SacctRunningOptions o;
    o.zone = TimeZone::from_posix_rule("UTC0");
    collect_sacct_running(client, ctx, o, out);
    ASSERT_EQ(out.records.size(), rows) << name;
    const auto& r = out.records[0];
    EXPECT_EQ(r["State"], "RUNNING");
    EXPECT_TRUE(r["AllocCPUS"].is_number_integer());
    EXPECT_EQ(r["End"], "Unknown");
    EXPECT_TRUE(r["Start"].get<std::string>().ends_with("+00:00")) << r["Start"];
    EXPECT_TRUE(r["NodeList"].is_array());
    // An empty Partition (a step): the partition is NodeList up to its first '-' (the reference's rule).
    EXPECT_EQ(r["Partition"], "");
    EXPECT_EQ(r["derived_cluster"], "learnnode.learnnode0423");
    EXPECT_TRUE(r["AveCPU"].is_null());
  }
}

// Garbage or binary output once became records holding only derived_cluster: a first line without JobID is not a
// sacct header (the round fails naming the line), a row whose JobID is not a job id is a line error.
TEST(SacctRunning, GarbageIsALineErrorNotARecord) {
  CollectorContext ctx;
  ctx.cluster = "c";
  SacctRunningOptions o;
  {
    slurm::CannedSlurmClient client;
    static const char binary[] =
        "\x7f"
        "ELF\x02\x01\x01\0\0garbage\n\x01\x02junk\nmore junk\n";
    client.set_output("sacct_running", std::string(binary, sizeof binary - 1));
    Captured out;
    try {
      collect_sacct_running(client, ctx, o, out);
      FAIL() << "garbage gave " << out.records.size() << " record(s)";
    } catch (const slurm::SlurmError& e) {
      EXPECT_EQ(e.line(), 1u);
      EXPECT_NE(std::string(e.what()).find("not a sacct header (no JobID column): '?ELF"), std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(out.records.empty());
  }
  slurm::CannedSlurmClient client;
  client.set_output("sacct_running",
                    "JobID|#State|#Partition\n12|#RUNNING|#p\n<html>|#oops|#x\n|#|#\n"
                    "13.batch|#RUNNING|#p\n");
  Captured out;
  SacctRunningStats st = collect_sacct_running(client, ctx, o, out);
  EXPECT_EQ(st.not_sacct_rows, 2u);
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[0]["JobID"], "12");
  EXPECT_EQ(out.records[1]["JobID"], "13.batch");
}

// --- fsacct (§1.15) ---

TEST(Fsacct, PatchedCommandLineIsTheReferences) {
  REQUIRE_LA();
  std::string states =
      "boot_fail,cancelled,completed,deadline,failed,node_fail,out_of_memory,preempted,requeued,"
      "resizing,revoked,timeout";
  FsacctArgs a = parse_fsacct_args({"-P", "-S", "2021-04-07T23:57:00", "-E", "2021-04-07T23:59:59", "--delimiter", "|",
                                    "-s", states, "-a", "-o", "jobid,state", "--wrapper-batch-size", "7"});
  ASSERT_TRUE(fsacct_patches(a));
  EXPECT_EQ(a.batch_size, 7);
  FsacctWindow w;
  auto argv = fsacct_sacct_argv(a, 0, TimeZone::load("America/Los_Angeles"), w);
  EXPECT_EQ(argv, (std::vector<std::string>{"sacct", "-P", "-a", "-E", "2021-04-07T23:59:59", "--delimiter", "|",
                                            "--state", states, "-o", "jobid,state,end", "-S", "2021-04-07T23:55:00"}));
  // Not patched: a non-terminal state, no -P, --help, no window.
  EXPECT_FALSE(fsacct_patches(parse_fsacct_args({"-P", "-S", "now", "-s", "running"})));
  EXPECT_FALSE(fsacct_patches(parse_fsacct_args({"-S", "now", "-s", "completed"})));
  EXPECT_FALSE(fsacct_patches(parse_fsacct_args({"-P", "-S", "now", "-s", "completed", "--help"})));
  EXPECT_FALSE(fsacct_patches(parse_fsacct_args({"-P", "-s", "completed"})));
  EXPECT_EQ(parse_fsacct_args({"--wrapper-batch-size=3", "-j", "5"}).original, (std::vector<std::string>{"-j", "5"}));
  EXPECT_THROW(parse_fsacct_args({"--wrapper-batch-size", "0"}), std::invalid_argument);
}

std::vector<std::string> run_filter(const std::string& text, FsacctWindow w, int64_t batch, const TimeZone& z) {
  std::vector<std::string> out;
  FsacctFilter f("|", true, w, z, batch, [&](std::string_view l) { out.emplace_back(l); });
  for (const auto& l : lines_of(text)) f.feed(l);
  f.finish();
  return out;
}

TEST(Fsacct, MidnightSmallMatchesExpected) {
  REQUIRE_FIXTURE("sample-sacct-output-midnight-edge-case-small.txt");
  REQUIRE_LA();
  TimeZone la = TimeZone::load("America/Los_Angeles");
  FsacctWindow w{parse_date_expr("2021-04-07T00:00:00", 0, la), parse_date_expr("2021-04-07T23:59:59", 0, la)};
  auto expected = lines_of(read_fixture("sample-sacct-output-midnight-edge-case-small-expected.txt"));
  for (int64_t batch : {1, 3, 1000})
    EXPECT_EQ(run_filter(read_fixture("sample-sacct-output-midnight-edge-case-small.txt"), w, batch, la), expected);
}

TEST(Fsacct, MidnightUpperBoundAndBatchedEqualsUnbatched) {
  REQUIRE_FIXTURE("sample-sacct-output-midnight-edge-case.txt");
  REQUIRE_LA();
  TimeZone la = TimeZone::load("America/Los_Angeles");
  FsacctWindow w{std::nullopt, parse_date_expr("2021-04-07T23:59:59", 0, la)};
  std::string text = read_fixture("sample-sacct-output-midnight-edge-case.txt");
  auto one = run_filter(text, w, 1, la);
  auto many = run_filter(text, w, 1000, la);
  EXPECT_EQ(one, many);
  ASSERT_GT(one.size(), 1u);
  EXPECT_EQ(one[0], "JobID|State|Start");
  size_t with_end_on_7th = 0;
  for (const auto& l : lines_of(text)) with_end_on_7th += l.find("|2021-04-08T") == std::string::npos;
  EXPECT_EQ(one.size(), with_end_on_7th);  // header + every row that ends on the 7th
  for (const auto& l : one) EXPECT_EQ(l.find("2021-04-08"), std::string::npos) << l;
}

// A stand-in `sacct` first on PATH for as long as the object lives.
class FakeSacctOnPath {
 public:
  explicit FakeSacctOnPath(const std::string& script) {
    char tmpl[] = "/tmp/gcm-fake-sacct-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    std::ofstream(dir_ + "/sacct") << script;
    std::filesystem::permissions(dir_ + "/sacct", std::filesystem::perms::owner_all);
    const char* path = std::getenv("PATH");
    old_path_ = path ? path : "/usr/bin:/bin";
    ::setenv("PATH", (dir_ + ":" + old_path_).c_str(), 1);
  }
  ~FakeSacctOnPath() {
    ::setenv("PATH", old_path_.c_str(), 1);
    std::filesystem::remove_all(dir_);
  }

 private:
  std::string dir_, old_path_;
};

// GCM's fsacct waits for sacct without a bound; a sacct hung on an unreachable slurmdbd then held fsacct (and a
// backfill run without --sacct-timeout) forever. Both the patched and the pass-through run are bounded.
TEST(Fsacct, AHungSacctIsKilledAtTheBoundAndFsacctExits137) {
  FakeSacctOnPath sacct("#!/bin/sh\necho 'JobID|#State|#End'\nexec sleep 30\n");
  const std::vector<std::vector<std::string>> command_lines = {
      {"-P", "-S", "2021-04-07T00:00:00", "-s", "completed", "-o", "jobid,state"},  // patched
      {"-j", "42"},                                                                 // passed through unchanged
  };
  for (const auto& args : command_lines) {
    ASSERT_EQ(args.size() > 2, fsacct_patches(parse_fsacct_args(args)));
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    auto t0 = std::chrono::steady_clock::now();
    // Long enough for the fake sacct to print its header on a loaded machine before it hangs.
    int rc = run_fsacct(args, std::chrono::milliseconds(2000));
    auto elapsed = std::chrono::steady_clock::now() - t0;
    std::string out = ::testing::internal::GetCapturedStdout();
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, 128 + SIGKILL) << err;
    EXPECT_LT(elapsed, std::chrono::seconds(10));  // the bound, not the 30 s sleep
    EXPECT_NE(err.find("fsacct: sacct ran longer than 2 s and was killed"), std::string::npos) << err;
    // What sacct printed before it hung still comes out (the header, without the added end column when patched).
    EXPECT_EQ(out, args.size() > 2 ? "JobID|#State\n" : "JobID|#State|#End\n");
  }
}

TEST(Fsacct, TheBoundIsFixedAndDocumented) {
  EXPECT_EQ(kFsacctSacctTimeout, std::chrono::hours(2));
  EXPECT_NE(fsacct_help().find("at most 2 hours"), std::string::npos);
}

// --- dates (date -d subset) ---

TEST(DateExpr, IsoRelativeAndWords) {
  REQUIRE_LA();
  TimeZone la = TimeZone::load("America/Los_Angeles");
  const int64_t now = 1617865199;  // 2021-04-07T23:59:59-07:00
  EXPECT_EQ(parse_date_expr("2021-04-07T23:59:59", 0, la), now);
  EXPECT_EQ(parse_date_expr("2021-04-07 23:59:59", 0, la), now);
  EXPECT_EQ(parse_date_expr("2021-04-08T06:59:59Z", 0, la), now);
  EXPECT_EQ(parse_date_expr("@1617865199", 0, la), now);
  EXPECT_EQ(parse_date_expr("now", now, la), now);
  EXPECT_EQ(parse_date_expr("3 hours ago", now, la), now - 3 * 3600);
  EXPECT_EQ(parse_date_expr("30 min ago", now, la), now - 1800);
  EXPECT_EQ(parse_date_expr("-2 days", now, la), now - 2 * 86400);
  EXPECT_EQ(parse_date_expr("yesterday", now, la), now - 86400);
  EXPECT_EQ(parse_date_expr("2021-04-07 +2 hours", now, la), parse_date_expr("2021-04-07T02:00:00", 0, la));
  EXPECT_EQ(parse_date_expr("1 month ago", now, la), parse_date_expr("2021-03-07T23:59:59", 0, la));
  // Across the DST change (2021-03-14): a day is a calendar day.
  EXPECT_EQ(parse_date_expr("2021-03-15T12:00:00 -1 day", 0, la), parse_date_expr("2021-03-14T12:00:00", 0, la));
  EXPECT_EQ(naive_local_iso(now, la), "2021-04-07T23:59:59");
  EXPECT_EQ(offset_iso(now, la), "2021-04-07T23:59:59-07:00");
  EXPECT_THROW(parse_date_expr("next blursday", now, la), slurm::ParseError);
  EXPECT_THROW(parse_date_expr("", now, la), slurm::ParseError);
  EXPECT_THROW(parse_date_expr("3 ago", now, la), slurm::ParseError);
}

// --- sacct_backfill's pieces (§1.16) ---

TEST(Backfill, TimeBoundsAreTheReferences) {
  auto c = gen_time_bounds(0, 10000, 3600);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], (Chunk{0, 3599}));
  EXPECT_EQ(c[1], (Chunk{3600, 7199}));
  EXPECT_EQ(c[2], (Chunk{7200, 10000}));
  EXPECT_THROW(gen_time_bounds(0, 10, 1), std::invalid_argument);
  EXPECT_THROW(gen_time_bounds(10, 0, 3600), std::invalid_argument);
}

TEST(Backfill, IntervalsFileNamesABadLine) {
  TimeZone utc = TimeZone::from_posix_rule("UTC0");
  auto c = read_intervals("# start,end\n2021-04-07T00:00:00,2021-04-07T01:00:00\n\n@0,@10\n", 0, utc);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1], (Chunk{0, 10}));
  try {
    read_intervals("@0,@1\n@0;@1\n", 0, utc);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

TEST(Backfill, StateFileSurvivesARestartAndATornLine) {
  std::string path = "/tmp/gcm-sacct-state-" + std::to_string(::getpid());
  std::filesystem::remove(path);
  TimeZone utc = TimeZone::from_posix_rule("UTC0");
  {
    BackfillState s(path);
    EXPECT_FALSE(s.done({0, 9}));
    s.mark_done({0, 9}, 5, utc);
    s.mark_done({10, 19}, 0, utc);
  }
  {
    std::ofstream torn(path, std::ios::app);
    torn << "done 20 29";  // a crash in the middle of a write
  }
  BackfillState s(path);
  EXPECT_TRUE(s.done({0, 9}));
  EXPECT_TRUE(s.done({10, 19}));
  EXPECT_FALSE(s.done({20, 29}));
  s.mark_done({20, 29}, 1, utc);
  EXPECT_TRUE(BackfillState(path).done({20, 29}));
  EXPECT_EQ(BackfillState(path).size(), 3u);
  std::filesystem::remove(path);
}

// A chunk whose publish command started but never finished (the backfill was killed) is not done, and is known as
// interrupted to the next run; once done, it is not.
TEST(Backfill, StateFileKnowsAChunkCutOffWhilePublishing) {
  std::string path = "/tmp/gcm-sacct-state-publishing-" + std::to_string(::getpid());
  std::filesystem::remove(path);
  TimeZone utc = TimeZone::from_posix_rule("UTC0");
  {
    BackfillState s(path);
    s.mark_publishing({0, 9}, 5, utc);
    s.mark_done({0, 9}, 5, utc);
    s.mark_publishing({10, 19}, 3, utc);  // killed here
  }
  BackfillState s(path);
  EXPECT_TRUE(s.done({0, 9}));
  EXPECT_FALSE(s.interrupted({0, 9}));
  EXPECT_FALSE(s.done({10, 19}));
  EXPECT_TRUE(s.interrupted({10, 19}));
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("publishing 10 19 3 "), std::string::npos) << text;
  s.mark_done({10, 19}, 3, utc);
  EXPECT_FALSE(s.interrupted({10, 19}));
  EXPECT_FALSE(BackfillState(path).interrupted({10, 19}));
  std::filesystem::remove(path);
}

TEST(Backfill, FsacctArgvIsTheReferences) {
  BackfillOptions o;
  o.gcm_binary = "/usr/bin/gcm";
  o.cluster = "c1";
  o.zone = TimeZone::from_posix_rule("UTC0");
  auto argv = fsacct_chunk_argv(o, {0, 3599});
  EXPECT_EQ(argv, (std::vector<std::string>{
                      "/usr/bin/gcm", "fsacct", "--wrapper-batch-size", "1000", "-P", "-S", "1970-01-01T00:00:00+00:00",
                      "-E", "1970-01-01T00:59:59+00:00", "-s",
                      "boot_fail,cancelled,completed,deadline,failed,node_fail,out_of_memory,preempted,requeued,"
                      "resizing,revoked,timeout",
                      "-a", "-o", "all", "--duplicates", "--noconvert", "--clusters", "c1"}));
}

}  // namespace
}  // namespace gcm::sacct
