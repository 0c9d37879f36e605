// The collectors' parsers on the command outputs recorded on the testbed of every Slurm version
// (tests/fixtures/slurm-<version>/: 22.05, 24.11, 25.11). A field that comes out empty on a newer version where 22.05's
// recording fills it is a failure, not a silence: a renamed column or key is what empties a field. Each test names
// the fields that may differ and why (docs/reference/collectors.md).
#include <gtest/gtest.h>
#include <spdlog/logger.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "collectors/slurm_collectors.h"
#include "recorded_slurm.h"
#include "slurm/sdiag.h"
#include "text_file.h"

namespace gcm {
namespace {

using gcm::testing::read_file;
using gcm::testing::RecordedSlurm;
using gcm::testing::recorded_slurms;
using gcm::testing::RecordedSlurmName;
using slurm::CannedSlurmClient;

struct Captured : RecordOut {
  std::vector<Record> records;
  void emit(const Record& r) override { records.push_back(r); }
};

CollectorContext context() {
  CollectorContext c;
  c.cluster = "testbed";
  c.heterogeneous_cluster_v1 = true;
  c.log = std::make_shared<spdlog::logger>("test");  // no sinks
  return c;
}

SlurmSnapshotOptions options() {
  SlurmSnapshotOptions o;
  o.collection_unixtime = 1800000000;
  o.zone = TimeZone();  // UTC
  return o;
}

// The fields that are non-null in at least one of the records.
std::set<std::string> filled(const std::vector<Record>& records) {
  std::set<std::string> out;
  for (const Record& r : records)
    for (size_t f = 0; f < r.schema->fields.size(); ++f)
      if (!r.values[f].is_null()) out.insert(r.schema->fields[f].name);
  return out;
}

// The fields 22.05's recording fills that `later` leaves empty in every record, less the `expected` ones.
std::set<std::string> emptied(const std::set<std::string>& in_2205, const std::set<std::string>& later,
                              const std::set<std::string>& expected = {}) {
  std::set<std::string> out;
  for (const auto& f : in_2205)
    if (!later.count(f) && !expected.count(f)) out.insert(f);
  return out;
}

const RecordedSlurm& slurm_2205() { return recorded_slurms().front(); }

class RecordedSlurmCli : public ::testing::TestWithParam<RecordedSlurm> {};

std::vector<Record> nodes(const RecordedSlurm& s, SinfoFormat format) {
  CannedSlurmClient client;
  client.set_output("sinfo_all_nodes", read_file(s.cli_dir() + "sinfo-all.txt"));
  client.set_output("sinfo_all_nodes_json", read_file(s.cli_dir() + "sinfo-all-N.json"));
  SlurmSnapshotOptions o = options();
  o.sinfo_format = format;
  Captured out;
  collect_slurm_nodes(client, context(), o, out);
  return out.records;
}

// NodeData from `sinfo -N -o %all` and from `sinfo --all -N --json` (what --sinfo-format auto picks from 23.11): the
// same records field for field on every version (PARTITION apart: the JSON does not mark the default with '*'), and
// every field 22.05 fills filled.
TEST_P(RecordedSlurmCli, NodeDataFromTextAndJsonAgreeAndNoFieldGoesEmpty) {
  const RecordedSlurm& s = GetParam();
  std::vector<Record> text = nodes(s, SinfoFormat::Text), json = nodes(s, SinfoFormat::Json);
  ASSERT_EQ(text.size(), 9u) << "8 nodes, node6 in two partitions";
  ASSERT_EQ(json.size(), text.size());
  // By node and partition: sinfo of 24.11 lists node6's two rows in the other order in its text and its JSON.
  auto keyed = [](const std::vector<Record>& records) {
    std::map<std::string, const Record*> out;
    for (const Record& r : records) {
      std::string p = r.at("PARTITION").as_string();
      if (p.ends_with("*")) p.pop_back();
      out[r.at("NODE_NAME").as_string() + "/" + p] = &r;
    }
    return out;
  };
  auto by_text = keyed(text), by_json = keyed(json);
  ASSERT_EQ(by_text.size(), 9u);
  const Schema& schema = node_data_schema();
  for (const auto& [row, t] : by_text) {
    ASSERT_TRUE(by_json.count(row)) << row;
    const Record& j = *by_json.at(row);
    for (size_t f = 0; f < schema.fields.size(); ++f) {
      const std::string& name = schema.fields[f].name;
      if (name == "PARTITION") continue;  // the key; the JSON does not mark the default partition with '*'
      EXPECT_EQ(j.values[f], t->values[f]) << row << " " << name << ": " << j.values[f].to_display_string() << " vs "
                                           << t->values[f].to_display_string();
    }
  }
  EXPECT_EQ(emptied(filled(nodes(slurm_2205(), SinfoFormat::Text)), filled(text)), std::set<std::string>{});
  EXPECT_EQ(text[7].at("STATE"), Value("drained"));
  EXPECT_EQ(text[7].at("REASON"), Value("testbed: GPU fell off the bus (xid 79)"));
  EXPECT_EQ(text[8].at("STATE"), Value("down"));
}

std::vector<Record> jobs(const RecordedSlurm& s) {
  CannedSlurmClient client;
  client.set_output("squeue_jobs", read_file(s.cli_dir() + "squeue-O.txt"));
  Captured out;
  collect_slurm_jobs(client, context(), options(), out);
  return out.records;
}

// JobData from squeue's 34 columns: the workload's 14 jobs squeue lists, every field 22.05 fills filled.
TEST_P(RecordedSlurmCli, JobDataNoFieldGoesEmpty) {
  const RecordedSlurm& s = GetParam();
  std::vector<Record> records = jobs(s);
  ASSERT_GE(records.size(), 14u);
  std::set<std::string> got = filled(records);
  EXPECT_EQ(emptied(filled(jobs(slurm_2205())), got), std::set<std::string>{});
  for (const char* f : {"JOBID", "USER", "STATE", "PARTITION", "ACCOUNT", "QOS", "TRES_GPUS_ALLOCATED", "NODELIST",
                        "SUBMIT_TIME", "MIN_MEMORY", "PENDING_TIME", "SCHEDNODES"})
    EXPECT_TRUE(got.count(f)) << f;
}

TEST_P(RecordedSlurmCli, ScontrolPartitionsAndConfigNoFieldGoesEmpty) {
  auto collect = [](const RecordedSlurm& s) {
    CannedSlurmClient client;
    client.set_output("scontrol_partitions", read_file(s.cli_dir() + "scontrol-partition.txt"));
    client.set_output("scontrol_config", read_file(s.cli_dir() + "scontrol-config.txt"));
    Captured parts, config;
    collect_scontrol_partitions(client, context(), options(), parts);
    collect_scontrol_config(client, context(), options(), config);
    return std::make_pair(parts.records, config.records);
  };
  const RecordedSlurm& s = GetParam();
  auto [parts, config] = collect(s);
  auto [parts_2205, config_2205] = collect(slurm_2205());
  ASSERT_EQ(parts.size(), 2u);
  ASSERT_EQ(config.size(), 1u);
  EXPECT_EQ(emptied(filled(parts_2205), filled(parts)), std::set<std::string>{});
  EXPECT_EQ(parts[0].at("TresGRESGPU"), Value(12));
  EXPECT_EQ(parts[0].at("TresBillingWeightGRESGPU"), Value(4));
  EXPECT_TRUE(config[0].at("SLURM_VERSION").as_string().starts_with(s.version)) << s.version;
  // A setting 22.05 prints may be empty on a newer version only where that version's scontrol show config does not
  // print it at all (settings Slurm removed: CoreSpecPlugin, ExtSensors*, RoutePlugin, JobCredential*, Power*, ...;
  // the unset Prolog and Epilog are no longer listed).
  const std::string text = read_file(s.cli_dir() + "scontrol-config.txt");
  for (const auto& f : emptied(filled(config_2205), filled(config)))
    EXPECT_EQ(text.find("\n" + f + " "), std::string::npos) << f << " is printed, yet the record has it empty";
  for (const char* f : {"ClusterName", "SlurmctldPort", "SlurmdPort", "SchedulerType", "SelectType", "AuthType"})
    EXPECT_FALSE(config[0].at(f).is_null()) << f;
}

// slurm_monitor's Sdiag: from the text of `sdiag --all` on every version, and from `sdiag --all --json` (what it reads
// from Slurm 23.02 on) on 24.11 and 25.11, where the JSON must give every statistic the text gives.
TEST_P(RecordedSlurmCli, SdiagTextAndJson) {
  const RecordedSlurm& s = GetParam();
  slurm::Sdiag text = slurm::parse_sdiag_text(read_file(s.cli_dir() + "sdiag.txt"));
  std::set<std::string> from_text = filled({text.record});
  EXPECT_EQ(emptied(filled({slurm::parse_sdiag_text(read_file(slurm_2205().cli_dir() + "sdiag.txt")).record}),
                    from_text),
            std::set<std::string>{});
  if (s.version == "22.05") return;  // no --json
  slurm::Sdiag json = slurm::parse_sdiag_json(read_file(s.cli_dir() + "sdiag-json.txt"));
  std::set<std::string> from_json = filled({json.record});
  EXPECT_EQ(emptied(from_text, from_json), std::set<std::string>{}) << "given by the text, null from the JSON";
  EXPECT_GT(from_json.size(), from_text.size()) << "the JSON has the sums the text does not print";
  for (const char* f : {"server_thread_count", "agent_queue_size", "sdiag_jobs_submitted", "schedule_cycle_max"})
    EXPECT_TRUE(json.get(f).has_value()) << f;
}

INSTANTIATE_TEST_SUITE_P(Recorded, RecordedSlurmCli, ::testing::ValuesIn(recorded_slurms()), RecordedSlurmName());

}  // namespace
}  // namespace gcm
