// slurmrestd's answers rendered as the CLI output (slurm/rest_render.h), against the CLI's own output recorded at the
// same second on the testbed (tests/fixtures/slurmrestd-<version>/, every API version of Slurm 22.05, 24.11 and
// 25.11): every field the same, except those the REST API cannot give as squeue prints them.
#include "slurm/rest_render.h"

#include <gtest/gtest.h>
#include <spdlog/logger.h>

#include <map>

#include "collectors/slurm_collectors.h"
#include "core/ascii.h"
#include "recorded_slurm.h"
#include "slurm/coerce.h"
#include "slurm/delimited.h"
#include "text_file.h"

namespace gcm::slurm {
namespace {

using gcm::collect_scontrol_partitions;
using gcm::CollectorContext;
using gcm::Record;
using gcm::RecordOut;
using gcm::Schema;
using gcm::scontrol_schema;
using gcm::SlurmSnapshotOptions;
using gcm::squeue_columns;

using gcm::testing::read_file;
using gcm::testing::recorded_apis;
using gcm::testing::RecordedApi;
using gcm::testing::RecordedApiName;

// slurm_job_monitor's squeue columns, in argv order.
const std::vector<std::string>& kColumns = squeue_columns();

// JOBARRAYID -> column -> value.
std::map<std::string, std::map<std::string, std::string>> rows(const std::string& text, size_t fields) {
  std::map<std::string, std::map<std::string, std::string>> out;
  std::vector<std::string_view> f;
  for_each_line(text, [&](std::string_view line) {
    split_fields(line, "|#", f);
    EXPECT_EQ(f.size(), fields + 1) << line;  // the trailing "|#" leaves an empty last field
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < kColumns.size() && i < f.size(); ++i) row[kColumns[i]] = std::string(f[i]);
    if (f.size() > kColumns.size()) row["GRES_DETAIL"] = std::string(f[kColumns.size()]);
    out[row["JOBARRAYID"]] = row;
  });
  return out;
}

class RestRenderRecorded : public ::testing::TestWithParam<RecordedApi> {};

TEST_P(RestRenderRecorded, JobsAsSqueuePrintsThem) {
  const RecordedApi& p = GetParam();
  int64_t at = std::stoll(read_file(p.cli("recorded-at.txt")));
  auto cli = rows(read_file(p.cli("squeue-O.txt")), kColumns.size());
  auto rest = rows(render_squeue_jobs(read_file(p.rest("jobs.json")), at, TimeZone()), kColumns.size() + 1);
  ASSERT_GE(cli.size(), 14u);
  ASSERT_EQ(rest.size(), cli.size()) << "the jobs squeue shows: pending, running, completing";
  size_t with_gpus = 0;
  for (const auto& [id, c] : cli) {
    ASSERT_TRUE(rest.count(id)) << id;
    const auto& r = rest.at(id);
    for (const auto& col : kColumns) {
      // v0.0.38 has no scheduled nodes: squeue's SCHEDNODES of a job the backfill planned is not in the answer.
      if (col == "SCHEDNODES" && c.at(col) != "(null)" && p.minor() < 39) {
        EXPECT_EQ(r.at(col), "(null)") << id;
        continue;
      }
      EXPECT_EQ(r.at(col), c.at(col)) << id << " " << col;
    }
    with_gpus += r.at("GRES_DETAIL").find("gpu:") != std::string::npos;
  }
  EXPECT_GE(with_gpus, 4u) << "running GPU jobs carry their gres_detail";
}

TEST_P(RestRenderRecorded, NodesAsSlurmMonitorsSinfo) {
  const RecordedApi& p = GetParam();
  auto lines = [](const std::string& text) {
    std::map<std::string, std::vector<std::string>> out;  // node/partition -> fields
    std::vector<std::string_view> f;
    for_each_line(text, [&](std::string_view line) {
      split_fields(line, "|", f);
      std::vector<std::string> v;
      for (auto x : f) v.emplace_back(ascii_trim(x));
      if (v.size() >= 7) {
        if (!v[6].empty() && v[6].back() == '*') v[6].pop_back();
        out[v[0] + "/" + v[6]] = std::vector<std::string>(v.begin(), v.begin() + 7);
      }
    });
    return out;
  };
  auto cli = lines(read_file(p.cli("sinfo-O-nodes.txt")));
  auto rest = lines(render_sinfo_nodes(read_file(p.rest("nodes.json"))));
  ASSERT_EQ(cli.size(), 9u);
  EXPECT_EQ(rest, cli);
}

// The scontrol collector's records from slurmrestd's partitions equal those from `scontrol show partition -a -o`,
// apart from PreemptMode, which the partitions of v0.0.40 and later do not carry (null from REST).
TEST_P(RestRenderRecorded, PartitionsGiveTheScontrolCollectorTheSameRecords) {
  const RecordedApi& p = GetParam();
  struct Keep : RecordOut {
    std::vector<Record> records;
    void emit(const Record& r) override { records.push_back(r); }
  };
  CollectorContext ctx;
  ctx.cluster = "testbed";
  ctx.heterogeneous_cluster_v1 = true;
  ctx.log = std::make_shared<spdlog::logger>("test");
  auto collect = [&](const std::string& text) {
    CannedSlurmClient client;
    client.set_output("scontrol_partitions", text);
    Keep out;
    collect_scontrol_partitions(client, ctx, SlurmSnapshotOptions{}, out);
    return out.records;
  };
  auto cli = collect(read_file(p.cli("scontrol-partition.txt")));
  auto rest = collect(render_scontrol_partitions(read_file(p.rest("partitions.json"))));
  ASSERT_EQ(cli.size(), 2u);
  ASSERT_EQ(rest.size(), cli.size());
  const Schema& s = scontrol_schema();
  for (size_t i = 0; i < cli.size(); ++i)
    for (size_t f = 0; f < s.fields.size(); ++f) {
      if (s.fields[f].name == "PreemptMode" && p.minor() >= 40) {
        EXPECT_TRUE(rest[i].values[f].is_null()) << i;
        EXPECT_FALSE(cli[i].values[f].is_null()) << i;
        continue;
      }
      EXPECT_EQ(rest[i].values[f], cli[i].values[f])
          << i << " " << s.fields[f].name << ": " << rest[i].values[f].to_display_string() << " vs "
          << cli[i].values[f].to_display_string();
    }
}

INSTANTIATE_TEST_SUITE_P(Recorded, RestRenderRecorded, ::testing::ValuesIn(recorded_apis()), RecordedApiName());

TEST(RestRender, SlurmTimeFormats) {
  EXPECT_EQ(slurm_duration(0), "0:00");
  EXPECT_EQ(slurm_duration(103), "1:43");
  EXPECT_EQ(slurm_duration(3600), "1:00:00");
  EXPECT_EQ(slurm_duration(3497), "58:17");
  EXPECT_EQ(slurm_duration(90061), "1-01:01:01");
  EXPECT_EQ(slurm_duration(-5), "0:00");
  EXPECT_EQ(slurm_time_limit(60), "1:00:00");
  EXPECT_EQ(slurm_time_limit(std::nullopt), "UNLIMITED");
}

TEST(RestRender, MalformedJobsNameTheJobAndTheKey) {
  auto error = [](const std::string& text) {
    try {
      render_squeue_jobs(text, 0, TimeZone());
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error(R"({"jobs": [{"job_state": "RUNNING"}]})"), "slurmrestd jobs: jobs[0]: no \"job_id\"");
  EXPECT_EQ(error(R"({"jobs": [{"job_state": 7}]})"),
            "slurmrestd jobs: jobs[0]: job_state is neither a string nor a list of strings");
  EXPECT_EQ(error(R"({"meta": {}})"), "slurmrestd jobs: no \"jobs\" list");
  EXPECT_EQ(error("{"), "slurmrestd jobs is not valid JSON");
  EXPECT_EQ(error(R"({"jobs": [{"job_state": "COMPLETED"}]})"), "accepted") << "not a job squeue shows";
}

}  // namespace
}  // namespace gcm::slurm
