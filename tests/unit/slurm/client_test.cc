#include "slurm/client.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "slurm/parse_error.h"

namespace gcm::slurm {
namespace {

using namespace std::chrono_literals;

// A directory of fake Slurm commands (shell scripts), removed at the end of the test.
class FakeCommands {
 public:
  FakeCommands() {
    char tmpl[] = "/tmp/gcm-slurm-client-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~FakeCommands() { std::filesystem::remove_all(dir_); }
  std::string add(const std::string& name, const std::string& body) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }

 private:
  std::string dir_;
};

TEST(SlurmClient, StreamsLinesAndRows) {
  FakeCommands fake;
  std::string sinfo =
      fake.add("sinfo", "printf 'NODELIST|STATE|GRES\\nn1|idle|gpu:8\\nn2 | mixed |gpu:a100:4(S:0)\\n'");
  CliSlurmClient client;
  SlurmQuery q{"sinfo_nodes", {sinfo, "-N", "-o", "%all"}, 5s};
  std::vector<std::string> lines;
  EXPECT_EQ(client.stream_lines(q, [&](std::string_view l) { lines.emplace_back(l); }), 3u);
  EXPECT_EQ(lines.back(), "n2 | mixed |gpu:a100:4(S:0)");
  std::vector<std::string> states;
  size_t rows = client.stream_rows(
      q, {}, [&](const DelimitedHeader& h, const DelimitedRow& r) { states.emplace_back(r[*h.first("STATE")]); });
  EXPECT_EQ(rows, 2u);
  EXPECT_EQ(states, (std::vector<std::string>{"idle", "mixed"}));
  EXPECT_EQ(client.output(q), "NODELIST|STATE|GRES\nn1|idle|gpu:8\nn2 | mixed |gpu:a100:4(S:0)");
}

TEST(SlurmClient, BadRowNamesCommandAndLineAndStopsTheCommand) {
  FakeCommands fake;
  std::string sacct = fake.add("sacct", "echo 'A|B'; echo '1|2'; echo 'broken'; sleep 30");
  CliSlurmClient client;
  SlurmQuery q{"sacct_jobs", {sacct, "-P"}, 20s};
  auto t0 = std::chrono::steady_clock::now();
  try {
    client.stream_rows(q, {}, [](const DelimitedHeader&, const DelimitedRow&) {});
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_EQ(e.line(), 3u);
    EXPECT_EQ(e.query(), "sacct_jobs");
    EXPECT_EQ(std::string(e.what()), "`" + sacct + " -P`, line 3: row has 1 fields, the header has 2");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s) << "the command was killed, not waited for";
}

TEST(SlurmClient, HandlerExceptionsBecomeSlurmErrors) {
  FakeCommands fake;
  std::string squeue = fake.add("squeue", "echo ok; echo 'gpu::8'");
  CliSlurmClient client;
  SlurmQuery q{"squeue_jobs", {squeue}, 5s};
  try {
    client.stream_lines(q, [](std::string_view l) {
      if (l != "ok") throw ParseError("bad GRES '" + std::string(l) + "'");
    });
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_EQ(e.line(), 2u);
    EXPECT_NE(std::string(e.what()).find("line 2: bad GRES 'gpu::8'"), std::string::npos) << e.what();
  }
}

TEST(SlurmClient, CommandFailuresNameTheCommand) {
  FakeCommands fake;
  CliSlurmClient client;
  std::string failing =
      fake.add("scontrol", "echo 'slurm_load_partitions: Unable to contact slurm controller' >&2; exit 1");
  try {
    client.output({"scontrol_partitions", {failing, "show", "partition", "-o"}, 5s});
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(failing + " show partition -o"), std::string::npos) << m;
    EXPECT_NE(m.find("exited with status 1"), std::string::npos) << m;
    EXPECT_NE(m.find("Unable to contact slurm controller"), std::string::npos) << m;
    EXPECT_EQ(e.line(), 0u);
  }
  try {
    client.output({"sdiag", {"gcm-no-such-slurm-command", "--all"}, 5s});
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_NE(std::string(e.what()).find("gcm-no-such-slurm-command"), std::string::npos) << e.what();
  }
  std::string slow = fake.add("sdiag", "sleep 30");
  try {
    client.output({"sdiag", {slow}, 200ms});
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
}

TEST(SlurmClient, RecordsAndEnvironment) {
  FakeCommands fake;
  std::string scontrol =
      fake.add("scontrol", "printf 'JobId=1 JobName=a b\\n   NodeList=n1\\n\\nJobId=2\\n   NodeList=%s\\n' \"$WHERE\"");
  CliSlurmClient client({{"WHERE=n[2-3]"}});
  std::vector<std::string> nodelists;
  size_t n = client.stream_records({"scontrol_jobs", {scontrol, "show", "job", "-d"}, 5s},
                                   [&](const ScontrolRecord& r) { nodelists.emplace_back(*r.get("NodeList")); });
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(nodelists, (std::vector<std::string>{"n1", "n[2-3]"}));
  try {
    client.stream_records({"scontrol_jobs", {scontrol}, 5s}, [](const ScontrolRecord& r) {
      if (r.get("JobId") == "2") throw ParseError("job 2 is bad");
    });
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_EQ(e.line(), 4u) << "the record's first line";
  }
}

TEST(SlurmClient, CannedClientAnswersByName) {
  CannedSlurmClient canned;
  canned.set_output("sinfo_nodes", "A|B\n1|2\n");
  canned.set_failure("sdiag", "slurmctld is down");
  size_t rows = canned.stream_rows({"sinfo_nodes", {"sinfo"}}, {},
                                   [](const DelimitedHeader&, const DelimitedRow& r) { EXPECT_EQ(r[1], "2"); });
  EXPECT_EQ(rows, 1u);
  EXPECT_THROW(canned.output({"sdiag", {"sdiag"}}), SlurmError);
  EXPECT_THROW(canned.output({"unknown", {}}), SlurmError);
  ASSERT_EQ(canned.queries().size(), 3u);
  EXPECT_EQ(canned.queries()[1].name, "sdiag");
  try {
    canned.stream_rows({"sinfo_nodes", {"sinfo", "-N"}}, {.delimiter = "|", .header = false, .columns = {"X"}},
                       [](const DelimitedHeader&, const DelimitedRow&) {});
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_STREQ(e.what(), "`sinfo -N`, line 1: row has 2 fields, the header has 1");
  }
}

}  // namespace
}  // namespace gcm::slurm
