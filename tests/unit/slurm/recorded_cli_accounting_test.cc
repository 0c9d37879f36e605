// The accounting and scheduler collectors (sacctmgr_qos, sacctmgr_user, sprio, sshare, sacct_running, sacct_publish
// on fsacct's query) on the command outputs recorded on the testbed of every Slurm version (tests/fixtures/slurm-
// <version>/: 22.05, 24.11, 25.11). Cell by cell: every value a recorded row has must be in that row's record, under
// the column's key, so a field that comes out empty where the CLI fills it fails here. The only exceptions are named
// with their reason (docs/reference/collectors.md).
#include <gtest/gtest.h>
#include <spdlog/logger.h>

#include <nlohmann/json.hpp>
#include <functional>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include "collectors/sacctmgr.h"
#include "collectors/scheduler_collectors.h"
#include "core/json.h"
#include "fixture_records.h"
#include "recorded_slurm.h"
#include "sacct/publish.h"
#include "sacct/sacct_records.h"
#include "sacct/sacct_running.h"
#include "slurm/client.h"
#include "text_file.h"

namespace gcm {
namespace {

using gcm::testing::read_file;
using gcm::testing::RecordedSlurm;
using gcm::testing::recorded_slurms;
using gcm::testing::RecordedSlurmName;

constexpr int64_t kRecordedNow = 1796141600;

using Cells = std::vector<std::string>;

Cells split_cells(const std::string& line, const std::string& delimiter) {
  Cells out;
  size_t at = 0;
  for (;;) {
    size_t next = line.find(delimiter, at);
    if (next == std::string::npos) {
      out.push_back(line.substr(at));
      return out;
    }
    out.push_back(line.substr(at, next - at));
    at = next + delimiter.size();
  }
}

// A delimited recording as rows of cells, the header first. A physical line with fewer cells than the header is
// joined with the next (a value holding a newline: sacct's SubmitLine); `trailing` drops the empty cell after a
// delimiter that ends every line (sacct's `--delimiter |#` rows end with one).
std::vector<Cells> delimited_rows(const std::string& text, const std::string& delimiter, bool header = true) {
  std::vector<Cells> rows;
  std::string pending;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    at = nl == std::string::npos ? text.size() : nl + 1;
    pending = pending.empty() ? line : pending + "\n" + line;
    Cells cells = split_cells(pending, delimiter);
    if (header && !rows.empty() && cells.size() < rows.front().size()) continue;
    rows.push_back(cells);
    pending.clear();
  }
  return rows;
}

// --- sacctmgr ------------------------------------------------------------------------------------------------------

class RecordedAccountingCli : public ::testing::TestWithParam<RecordedSlurm> {};

// Every cell of `sacctmgr show qos -P` is the record's value under its header; the capped QOS (it sets every limit
// sacctmgr prints) has every column filled on each version whose recording has it.
TEST_P(RecordedAccountingCli, SacctmgrQosEveryRecordedValueIsInItsRecord) {
  const RecordedSlurm& s = GetParam();
  const std::string text = read_file(s.cli_dir() + "sacctmgr-qos.txt");
  std::vector<Cells> rows = delimited_rows(text, "|");
  ASSERT_GE(rows.size(), 4u) << "header, normal, high, limited";
  slurm::CannedSlurmClient c;
  c.set_output("sacctmgr_qos", text);
  gcm::testing::Collect out;
  sacctmgr::collect_qos(c, {"testbed", false, kRecordedNow}, out);
  ASSERT_EQ(out.records.size(), rows.size() - 1);
  const Cells& header = rows.front();
  bool saw_capped = false;
  for (size_t i = 1; i < rows.size(); ++i) {
    const Value& q = out.records[i - 1].at("sacctmgr_qos");
    for (size_t j = 0; j < header.size(); ++j) {
      const Value* v = q.find(header[j]);
      ASSERT_NE(v, nullptr) << rows[i][0] << ": no key " << header[j];
      if (!rows[i][j].empty()) {
        EXPECT_EQ(*v, Value(rows[i][j])) << rows[i][0] << " " << header[j];
      }
    }
    if (rows[i][0] != "capped") continue;
    saw_capped = true;
    for (size_t j = 0; j < header.size(); ++j) {
      EXPECT_FALSE(rows[i][j].empty()) << "capped sets " << header[j];
    }
  }
  // 22.05's CLI recording predates the capped QOS; the newer recordings have it, with 23.02's MaxTRESRunMinsPA/PU.
  if (s.version != "22.05") {
    EXPECT_TRUE(saw_capped) << "tests/testbed/start.sh adds the QOS capped";
  }
}

// Answers sacctmgr_user's per-user query from that user's recorded file.
struct RecordedUsers : slurm::CannedSlurmClient {
  std::string dir;
  size_t fetch_lines(const slurm::SlurmQuery& q, const slurm::LineHandler& h) override {
    if (q.name == "sacctmgr_user_assoc") set_output(q.name, read_file(dir + "sacctmgr-user-" + q.argv[3] + ".txt"));
    return CannedSlurmClient::fetch_lines(q, h);
  }
};

TEST_P(RecordedAccountingCli, SacctmgrUserEveryRecordedValueIsInItsRecord) {
  const RecordedSlurm& s = GetParam();
  RecordedUsers c;
  c.dir = s.cli_dir();
  const std::string users = read_file(s.cli_dir() + "sacctmgr-users.txt");
  c.set_output("sacctmgr_users", users);
  gcm::testing::Collect out;
  sacctmgr::collect_users(c, {"testbed", false, kRecordedNow}, out);
  size_t at = 0;
  for (const Cells& user : delimited_rows(users, "|", false)) {
    if (user[0].empty()) continue;
    std::vector<Cells> rows = delimited_rows(read_file(s.cli_dir() + "sacctmgr-user-" + user[0] + ".txt"), "|");
    ASSERT_GE(rows.size(), 2u) << user[0];
    for (size_t i = 1; i < rows.size(); ++i, ++at) {
      ASSERT_LT(at, out.records.size()) << user[0];
      const Value& u = out.records[at].at("sacctmgr_user");
      for (size_t j = 0; j < rows[0].size(); ++j) {
        const Value* v = u.find(rows[0][j]);
        ASSERT_NE(v, nullptr) << user[0] << ": no key " << rows[0][j];
        if (!rows[i][j].empty()) {
          EXPECT_EQ(*v, Value(rows[i][j])) << user[0] << " " << rows[0][j];
        }
      }
    }
  }
  EXPECT_EQ(at, out.records.size());
  EXPECT_GE(at, 5u) << "alice has two associations, bob, carol and root one each";
}

// --- sprio, sshare -------------------------------------------------------------------------------------------------

const Value& object_member(const Value& object, const std::string& key) {
  const Value* v = object.find(key);
  if (!v) throw std::out_of_range(key);
  return *v;
}

// Each row of `sprio -o %i|%r|...` in its record, by the column's code; the numeric ones as numbers. Slurm 22.05
// prints neither %o (ACCOUNT) nor %n (QOSNAME): its rows are two cells shorter and those two are null.
TEST_P(RecordedAccountingCli, SprioEveryRecordedValueIsInItsRecord) {
  const RecordedSlurm& s = GetParam();
  const std::string text = read_file(s.cli_dir() + "sprio.txt");
  std::vector<Cells> rows = delimited_rows(text, "|", false);
  while (!rows.empty() && rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
  ASSERT_GE(rows.size(), 2u);
  slurm::CannedSlurmClient c;
  c.set_output("sprio", text);
  gcm::testing::Collect out;
  ASSERT_EQ(scheduler::collect_sprio(c, {"testbed", false, kRecordedNow, std::chrono::seconds(5)}, out), rows.size());
  const auto& columns = scheduler::sprio_columns();
  for (size_t i = 0; i < rows.size(); ++i) {
    const Value& p = out.records[i].at("sprio");
    std::vector<const scheduler::SprioColumn*> printed;
    for (const auto& col : columns) {
      bool old_slurm_lacks = rows[i].size() == columns.size() - 2 &&
                             (std::string(col.code) == "%o" || std::string(col.code) == "%n");
      if (old_slurm_lacks) {
        EXPECT_EQ(s.version, "22.05") << "only 22.05 leaves out %o and %n";
        EXPECT_TRUE(object_member(p, col.name).is_null()) << col.name;
      } else {
        printed.push_back(&col);
      }
    }
    ASSERT_EQ(printed.size(), rows[i].size()) << "row " << i;
    for (size_t j = 0; j < printed.size(); ++j) {
      const std::string& cell = rows[i][j];
      const Value& v = object_member(p, printed[j]->name);
      if (cell.empty()) continue;
      if (printed[j]->numeric) {
        EXPECT_DOUBLE_EQ(v.as_number(), std::stod(cell)) << printed[j]->name;
      } else {
        EXPECT_EQ(v, Value(cell)) << printed[j]->name;
      }
    }
  }
  if (s.version != "22.05") {
    EXPECT_FALSE(object_member(out.records[0].at("sprio"), "ACCOUNT").is_null());
    EXPECT_FALSE(object_member(out.records[0].at("sprio"), "QOSNAME").is_null());
  }
}

// Each cell of `sshare -a -P` under its header; the long format's keys sshare -P does not print are null.
TEST_P(RecordedAccountingCli, SshareEveryRecordedValueIsInItsRecord) {
  const RecordedSlurm& s = GetParam();
  const std::string text = read_file(s.cli_dir() + "sshare.txt");
  std::vector<Cells> rows = delimited_rows(text, "|");
  ASSERT_GE(rows.size(), 9u);
  slurm::CannedSlurmClient c;
  c.set_output("sshare", text);
  gcm::testing::Collect out;
  ASSERT_EQ(scheduler::collect_sshare(c, {"testbed", false, kRecordedNow, std::chrono::seconds(5)}, out),
            rows.size() - 1);
  const Cells& header = rows.front();
  for (size_t i = 1; i < rows.size(); ++i) {
    const Value& r = out.records[i - 1].at("sshare");
    for (size_t j = 0; j < header.size(); ++j) {
      if (!rows[i][j].empty()) {
        EXPECT_EQ(object_member(r, header[j]), Value(rows[i][j])) << i << " " << header[j];
      }
    }
    for (const auto& key : scheduler::sshare_keys()) {
      if (std::find(header.begin(), header.end(), key) == header.end()) {
        EXPECT_TRUE(object_member(r, key).is_null()) << key << " is not printed by sshare -a -P";
      }
    }
  }
}

// --- sacct ---------------------------------------------------------------------------------------------------------

struct JsonCaptured : RecordOut {
  std::vector<nlohmann::json> records;
  void emit(const Record& r) override { records.push_back(nlohmann::json::parse(to_json(r))); }
};

// Every non-empty cell of a `sacct ... --delimiter |#` recording is non-null in its record, under key_of(column) (""
// for a column the record does not keep: returned, for the caller to name).
std::set<std::string> expect_every_cell_in_records(const std::vector<Cells>& rows,
                                                   const std::vector<nlohmann::json>& records,
                                                   const std::function<std::string(const std::string&)>& key_of,
                                                   const std::string& what) {
  std::set<std::string> not_kept;
  EXPECT_GE(rows.size(), 2u) << what;
  EXPECT_EQ(records.size(), rows.size() - 1) << what;
  if (rows.size() < 2 || records.size() != rows.size() - 1) return not_kept;
  const Cells& header = rows.front();
  size_t checked = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].size(), header.size()) << what << " row " << i;
    for (size_t j = 0; j < header.size() && j < rows[i].size(); ++j) {
      if (header[j].empty() || rows[i][j].empty()) continue;
      std::string key = key_of(header[j]);
      if (key.empty()) {
        not_kept.insert(header[j]);
        continue;
      }
      EXPECT_TRUE(records[i - 1].contains(key) && !records[i - 1][key].is_null())
          << what << " " << rows[i][0] << " " << header[j] << " = '" << rows[i][j] << "' came out null (" << key
          << ")";
      ++checked;
    }
  }
  EXPECT_GT(checked, 100u) << what;
  return not_kept;
}

// sacct_running's Sacct records have the reference's fields: a column a newer Slurm renamed fills the field of the
// old name (24.11: Planned is Reserved), and no column of `-o all` is left out.
TEST_P(RecordedAccountingCli, SacctRunningEveryRecordedValueIsInItsRecord) {
  const RecordedSlurm& s = GetParam();
  const std::string text = read_file(s.cli_dir() + "sacct-running.txt");
  slurm::CannedSlurmClient client;
  client.set_output("sacct_running", text);
  CollectorContext ctx;
  ctx.cluster = "testbed";
  ctx.log = std::make_shared<spdlog::logger>("test");
  JsonCaptured out;
  sacct::SacctRunningOptions o;
  o.zone = TimeZone::from_posix_rule("UTC0");
  sacct::collect_sacct_running(client, ctx, o, out);
  const Schema& schema = sacct::sacct_schema();
  auto key_of = [&](const std::string& column) -> std::string {
    for (const auto& f : schema.fields)
      if (f.name == column || sacct::sacct_renamed_column(f.name) == column) return f.name;
    return "";
  };
  // Columns newer than the reference's Sacct record (it has no field for them; docs/reference/collectors.md).
  const std::set<std::string> newer_than_gcm =
      s.version == "22.05" ? std::set<std::string>{}
                           : std::set<std::string>{"QOSREQ", "Restarts", "SLUID", "StdIn", "StdOut"};
  std::set<std::string> not_kept =
      expect_every_cell_in_records(delimited_rows(text, "|#"), out.records, key_of, "sacct-running.txt");
  for (const auto& c : not_kept) EXPECT_TRUE(newer_than_gcm.count(c)) << c << " is printed and not kept";
  for (const auto& r : out.records) {
    EXPECT_FALSE(r["AssocID"].is_null()) << r["JobID"];
    EXPECT_FALSE(r["SubmitLine"].is_null()) << r["JobID"];
  }
}

// sacct_backfill's rows (fsacct's query of the terminal states, End appended) through sacct_publish.
TEST_P(RecordedAccountingCli, SacctPublishOfFsacctEveryRecordedValueIsInItsRecord) {
  const RecordedSlurm& s = GetParam();
  const std::string text = read_file(s.cli_dir() + "sacct-fsacct-terminal.txt");
  sacct::PublishOptions o;
  o.delimiter = "|#";
  o.naive_zone = o.sacct_zone = TimeZone::from_posix_rule("UTC0");
  o.end_ds_zone = TimeZone::from_posix_rule("PST8PDT,M3.2.0,M11.1.0");
  o.cluster = "testbed";
  o.time = kRecordedNow;
  sacct::SacctPublisher p(o, std::make_shared<spdlog::logger>("test"));
  JsonCaptured out;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    p.feed_line(std::string_view(text).substr(at, nl - at), out);
    at = nl + 1;
  }
  EXPECT_EQ(p.invalid_summary(), "");
  std::vector<nlohmann::json> rows_of;
  for (const auto& r : out.records) rows_of.push_back(r["sacct"]);
  EXPECT_EQ(expect_every_cell_in_records(delimited_rows(text, "|#"), rows_of,
                                         [](const std::string& column) { return column; },
                                         "sacct-fsacct-terminal.txt"),
            std::set<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(Recorded, RecordedAccountingCli, ::testing::ValuesIn(recorded_slurms()),
                         RecordedSlurmName());

}  // namespace
}  // namespace gcm
