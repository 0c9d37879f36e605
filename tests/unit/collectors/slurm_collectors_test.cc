// The Slurm snapshot collectors (slurm_job_monitor, scontrol, scontrol_config) on canned outputs: the reference
// corpus (../shared/fixtures/gcm, expected values of gcm-reference.md §7.1) and our Slurm 22.05 recordings.
#include "collectors/slurm_collectors.h"

#include <gtest/gtest.h>
#include <spdlog/logger.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "slurm/parse_error.h"
#include "text_file.h"

namespace gcm {
namespace {

using slurm::CannedSlurmClient;
using slurm::SlurmError;

const std::string kReference = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm/";
const std::string kOurs = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-22.05/";

using gcm::testing::read_file;

#define REQUIRE_REFERENCE(name)                                                                   \
  if (!std::filesystem::exists(kReference + (name)))                                              \
  GTEST_SKIP() << "reference fixture " << (name) << " not present (expected under " << kReference \
               << "; the reference corpus is not part of this repository)"

struct Captured : RecordOut {
  std::vector<Record> records;
  void emit(const Record& r) override { records.push_back(r); }
  const Record& operator[](size_t i) const { return records.at(i); }
  size_t size() const { return records.size(); }
};

CollectorContext context(bool heterogeneous = false) {
  CollectorContext c;
  c.cluster = "c1";
  c.heterogeneous_cluster_v1 = heterogeneous;
  c.log = std::make_shared<spdlog::logger>("test");  // no sinks: warnings go nowhere
  return c;
}

SlurmSnapshotOptions options() {
  SlurmSnapshotOptions o;
  o.collection_unixtime = 1700000000;
  o.zone = TimeZone();  // UTC
  return o;
}

std::vector<std::string> strings(const Value& v) {
  std::vector<std::string> out;
  for (const auto& x : v.as_list()) out.push_back(x.as_string());
  return out;
}

TEST(SlurmCollectors, SchemasMatchTheReferenceFieldLists) {
  EXPECT_EQ(node_data_schema().fields.size(), 19u);
  EXPECT_EQ(job_data_schema().fields.size(), 44u);  // 38 from squeue + 4 added + GCM 2026's 2
  EXPECT_EQ(scontrol_schema().fields.size(), 19u);
  EXPECT_EQ(scontrol_config_schema().fields.size(), 223u);  // 221 + cluster + derived_cluster
  EXPECT_EQ(scontrol_config_schema().fields[scontrol_config_schema().index_of("JobCompPort")].type, FieldType::Int);
  EXPECT_EQ(node_data_schema().identifier, DataIdentifier::Node);
  EXPECT_EQ(job_data_schema().identifier, DataIdentifier::Job);
  EXPECT_EQ(squeue_columns().size(), 35u);  // the 2025 reference's 34 and LASTSCHEDEVAL
}

TEST(SlurmCollectors, MetricNamesAreSnakeCase) {
  auto metric = [](const Schema& s, const char* field) {
    return prometheus_metric_name(s, s.fields[s.index_of(field)]);
  };
  EXPECT_EQ(metric(node_data_schema(), "NUM_GPUS"), "gcm_slurm_node_num_gpus");
  EXPECT_EQ(metric(job_data_schema(), "PENDING_TIME"), "gcm_slurm_job_pending_time_seconds");
  EXPECT_EQ(metric(scontrol_schema(), "TresBillingWeightGRESGPU"), "gcm_slurm_partition_tres_billing_weight_gresgpu");
  EXPECT_EQ(metric(scontrol_schema(), "TotalCPUs"), "gcm_slurm_partition_total_cpus");
  EXPECT_EQ(metric(scontrol_config_schema(), "PriorityWeightFairShare"), "gcm_slurm_config_priority_weight_fair_share");
}

TEST(SlurmCollectors, ExactArgv) {
  EXPECT_EQ(sinfo_all_nodes_argv(), (std::vector<std::string>{"sinfo", "--all", "-N", "-o", "%all"}));
  EXPECT_EQ(sinfo_all_nodes_json_argv(), (std::vector<std::string>{"sinfo", "--all", "-N", "--json"}));
  const auto& sq = squeue_jobs_argv();
  ASSERT_EQ(sq.size(), 5u);
  EXPECT_EQ(sq[0], "squeue");
  EXPECT_EQ(sq[1], "--all");
  EXPECT_EQ(sq[2], "-O");
  EXPECT_EQ(sq[4], "--noheader");
  EXPECT_TRUE(sq[3].starts_with("TRES-PER-NODE:|#,MINCPUS:|#,JOBARRAYID:|#,JOBID:|#,NAME:|#,"));
  EXPECT_TRUE(sq[3].ends_with(",RESTARTCNT:|#,SCHEDNODES:|#,LASTSCHEDEVAL:|#"));
  EXPECT_NE(sq[3].find(",EXCNODES:|#,STARTTIME:|#,"), std::string::npos);
  EXPECT_EQ(scontrol_partitions_argv(), (std::vector<std::string>{"scontrol", "show", "partition", "-a", "-o"}));
  EXPECT_EQ(scontrol_config_argv(), (std::vector<std::string>{"scontrol", "show", "config"}));
}

// --- reference corpus ---

TEST(SlurmCollectorsGolden, SinfoNodes) {
  REQUIRE_REFERENCE("sample-sinfo-output.txt");
  CannedSlurmClient client;
  client.set_output("sinfo_all_nodes", read_file(kReference + "sample-sinfo-output.txt"));
  Captured out;
  EXPECT_EQ(collect_slurm_nodes(client, context(), options(), out), 4u);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(client.queries().at(0).argv, sinfo_all_nodes_argv());
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(out[i].at("num_rows"), Value(4));
    EXPECT_EQ(out[i].at("collection_unixtime"), Value(1700000000));
    EXPECT_EQ(out[i].at("cluster"), Value("c1"));
    EXPECT_EQ(out[i].at("derived_cluster"), Value("c1"));
  }
  for (size_t i : {0, 1}) {
    EXPECT_EQ(out[i].at("NODE_NAME"), Value("node0201"));
    EXPECT_EQ(out[i].at("STATE"), Value("drained*"));
    EXPECT_EQ(out[i].at("USER"), Value("root"));
    EXPECT_EQ(out[i].at("MEMORY"), Value(500000));
    EXPECT_TRUE(out[i].at("FREE_MEM").is_null());
    EXPECT_EQ(out[i].at("NUM_GPUS"), Value(8));
    EXPECT_EQ(out[i].at("CPUS_ALLOCATED"), Value(0));
    EXPECT_EQ(out[i].at("CPUS_IDLE"), Value(0));
    EXPECT_EQ(out[i].at("CPUS_OTHER"), Value(80));
    EXPECT_EQ(out[i].at("CPUS_TOTAL"), Value(80));
  }
  EXPECT_EQ(out[0].at("RESERVATION"), Value(""));
  EXPECT_EQ(out[1].at("RESERVATION"), Value("test_reservation"));
  EXPECT_EQ(out[2].at("NODE_NAME"), Value("node1537"));
  EXPECT_EQ(out[2].at("STATE"), Value("allocated"));
  EXPECT_EQ(out[2].at("FREE_MEM"), Value(210288));
  EXPECT_EQ(out[2].at("REASON"), Value("none"));
  EXPECT_EQ(out[2].at("TIMESTAMP"), Value("Unknown"));
  EXPECT_EQ(out[2].at("USER"), Value("Unknown"));
  EXPECT_EQ(out[3].at("NUM_GPUS"), Value(2));
  EXPECT_EQ(out[3].at("FREE_MEM"), Value(449512));
}

TEST(SlurmCollectorsGolden, SqueueJobs) {
  REQUIRE_REFERENCE("sample-squeue-output.txt");
  CannedSlurmClient client;
  client.set_output("squeue_jobs", read_file(kReference + "sample-squeue-output.txt"));
  Captured out;
  EXPECT_EQ(collect_slurm_jobs(client, context(), options(), out), 5u);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(client.queries().at(0).argv, squeue_jobs_argv());
  std::vector<Value> gpus, min_memory, tres_gpus;
  for (const auto& r : out.records) {
    gpus.push_back(r.at("GPUS_REQUESTED"));
    min_memory.push_back(r.at("MIN_MEMORY"));
    tres_gpus.push_back(r.at("TRES_GPUS_ALLOCATED"));
    EXPECT_TRUE(r.at("PRIORITY").is_double());
    EXPECT_GE(r.at("RESTARTCNT").as_int(), 1);
  }
  EXPECT_EQ(gpus, (std::vector<Value>{0, 1, 8, 0, 8}));
  // GCM's 2026 unit: decimal bytes (gcm-newer.md §1.6); the 2025 reference's records said 0, 60000, ... MB.
  EXPECT_EQ(min_memory, (std::vector<Value>{0, int64_t{60'000'000'000}, int64_t{60'000'000'000},
                                            int64_t{10'500'000'000}, int64_t{1'000'000'000'000}}));
  EXPECT_EQ(tres_gpus, (std::vector<Value>{2, 1, 256, 0, 160}));
  EXPECT_EQ(out[0].at("PENDING_TIME"), Value(100));
  EXPECT_EQ(out[0].at("SUBMIT_TIME"), Value("2025-04-10T13:44:39+00:00"));
  EXPECT_EQ(out[4].at("JOBID"), Value("42271120_[7-8%1]"));
  EXPECT_EQ(out[4].at("TRES_MEM_ALLOCATED"), Value(1280500));
  auto nodes = strings(out[2].at("NODELIST"));
  ASSERT_EQ(nodes.size(), 32u);
  EXPECT_EQ(nodes.front(), "node1281");
  EXPECT_EQ(nodes.back(), "node1384");
  const Record& pending = out[3];
  EXPECT_EQ(pending.at("STATE"), Value("PENDING"));
  EXPECT_EQ(pending.at("REASON"), Value("DependencyNeverSatisfied"));
  EXPECT_EQ(pending.at("PENDING_RESOURCES"), Value("False"));
  EXPECT_TRUE(pending.at("NODELIST").is_null());
  EXPECT_EQ(pending.at("START_TIME"), Value("N/A"));
  EXPECT_EQ(out[0].at("PENDING_RESOURCES"), Value("False"));  // running
  for (const auto& r : out.records) EXPECT_EQ(strings(r.at("SCHEDNODES")).empty(), false);
  // The sample ends before LASTSCHEDEVAL (GCM's 2025 column list): null, as GCM's zip reads it.
  for (const auto& r : out.records) {
    EXPECT_TRUE(r.at("LAST_SCHED_EVAL").is_null());
    EXPECT_TRUE(r.at("GRES_GPU_INDICES").is_null());
  }
}

TEST(SlurmCollectorsGolden, ScontrolPartitions) {
  REQUIRE_REFERENCE("sample-scontrol-output.txt");
  CannedSlurmClient client;
  client.set_output("scontrol_partitions", read_file(kReference + "sample-scontrol-output.txt"));
  Captured out;
  EXPECT_EQ(collect_scontrol_partitions(client, context(true), options(), out), 3u);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].at("Partition"), Value("partition1"));
  EXPECT_EQ(out[0].at("derived_cluster"), Value("c1.partition1"));
  EXPECT_EQ(out[0].at("MaxNodes"), Value(-1));
  EXPECT_EQ(out[0].at("TresMEM"), Value(1770000000));
  EXPECT_EQ(out[0].at("TresBillingWeightMEM"), Value(125));
  EXPECT_EQ(out[0].at("PriorityTier"), Value(10));
  EXPECT_EQ(out[0].at("QoS"), Value("qos1"));
  EXPECT_EQ(out[1].at("MaxNodes"), Value(64));
  for (const char* f : {"TresCPU", "TresMEM", "TresNODE", "TresBILLING", "TresGRESGPU"})
    EXPECT_TRUE(out[1].at(f).is_null()) << f;
  EXPECT_EQ(out[1].at("TresBillingWeightCPU"), Value(2));
  EXPECT_EQ(out[1].at("TresBillingWeightMEM"), Value(250));
  EXPECT_EQ(out[1].at("TresBillingWeightGRESGPU"), Value(32));
  EXPECT_EQ(out[2].at("PreemptMode"), Value("OFF"));
  for (const char* f : {"TresBillingWeightCPU", "TresBillingWeightMEM", "TresBillingWeightGRESGPU"})
    EXPECT_EQ(out[2].at(f), Value(0)) << f;
  EXPECT_EQ(out[1].at("TotalNodes").as_int(), 1469);
}

TEST(SlurmCollectorsGolden, ScontrolConfig) {
  REQUIRE_REFERENCE("sample-scontrol-show-config-output.txt");
  CannedSlurmClient client;
  client.set_output("scontrol_config", read_file(kReference + "sample-scontrol-show-config-output.txt"));
  Captured out;
  collect_scontrol_config(client, context(), options(), out);
  ASSERT_EQ(out.size(), 1u);
  const Record& r = out[0];
  EXPECT_EQ(r.at("cluster"), Value("c1"));
  EXPECT_EQ(r.at("derived_cluster"), Value("c1"));
  EXPECT_EQ(r.at("AccountingStoragePort"), Value(6819));
  EXPECT_EQ(r.at("JobCompPort"), Value(0));
  EXPECT_EQ(r.at("AcctGatherNodeFreq"), Value("0 sec"));
  EXPECT_EQ(r.at("BOOT_TIME"), Value("2023-07-11T14:15:02"));
  EXPECT_EQ(r.at("ClusterName"), Value("cluster_name"));
  size_t present = 0;
  for (const auto& v : r.values) present += !v.is_null();
  EXPECT_GT(present, 150u);
}

// --- our Slurm 22.05 recordings ---

TEST(SlurmCollectors2205, SinfoNodes) {
  CannedSlurmClient client;
  client.set_output("sinfo_all_nodes", read_file(kOurs + "sinfo-all.txt"));
  Captured out;
  EXPECT_EQ(collect_slurm_nodes(client, context(true), options(), out), 9u);  // node6 is in two partitions
  ASSERT_EQ(out.size(), 9u);
  int64_t gpus = 0;
  for (const auto& r : out.records) {
    gpus += r.at("NUM_GPUS").as_int();
    EXPECT_EQ(r.at("CPUS_TOTAL"), Value(4));
    EXPECT_EQ(r.at("MEMORY"), Value(4000));
  }
  EXPECT_EQ(gpus, 18);  // 8 nodes x 2, node6 counted twice
  EXPECT_EQ(out[0].at("PARTITION"), Value("gpu*"));
  EXPECT_EQ(out[0].at("derived_cluster"), Value("c1.gpu"));
  EXPECT_EQ(out[7].at("NODE_NAME"), Value("node7"));
  EXPECT_EQ(out[7].at("STATE"), Value("drained"));
  EXPECT_EQ(out[7].at("REASON"), Value("testbed: GPU fell off the bus (xid 79)"));
  EXPECT_EQ(out[7].at("derived_cluster"), Value("c1.debug"));
  EXPECT_EQ(out[8].at("STATE"), Value("down"));
  EXPECT_EQ(out[8].at("REASON"), Value("testbed: node unreachable"));
}

TEST(SlurmCollectors2205, SqueueJobsWithEmptyExcnodes) {
  CannedSlurmClient client;
  client.set_output("squeue_jobs", read_file(kOurs + "squeue-O.txt"));
  Captured out;
  EXPECT_EQ(collect_slurm_jobs(client, context(), options(), out), 14u);
  std::map<std::string, const Record*> by_id;
  for (const auto& r : out.records) {
    by_id[r.at("JOBID").as_string()] = &r;
    EXPECT_TRUE(r.at("EXC_NODES").is_null()) << "22.05 prints EXCNODES empty";
    if (r.at("JOBID") != Value("76")) {
      EXPECT_TRUE(r.at("SCHEDNODES").is_null());
    }
    EXPECT_TRUE(r.at("SUBMIT_TIME").as_string().ends_with("+00:00"));
  }
  EXPECT_EQ(by_id.at("76")->at("PENDING_RESOURCES"), Value("True"));
  EXPECT_EQ(strings(by_id.at("76")->at("SCHEDNODES")), (std::vector<std::string>{"node1", "node2", "node3", "node4"}));
  EXPECT_EQ(by_id.at("71")->at("REASON"), Value("Dependency"));
  EXPECT_EQ(by_id.at("71")->at("PENDING_RESOURCES"), Value("False"));
  EXPECT_EQ(by_id.at("61")->at("REASON"), Value("QOSMaxJobsPerUserLimit"));
  EXPECT_EQ(by_id.at("61")->at("PENDING_TIME"), Value(90));
  EXPECT_EQ(by_id.at("61")->at("MIN_MEMORY"), Value(int64_t{500'000'000}));  // "500M"
  EXPECT_EQ(strings(by_id.at("62")->at("NODELIST")), (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(by_id.at("63_2")->at("JOBID_RAW").as_string().empty(), false);
  EXPECT_EQ(by_id.at("59")->at("START_TIME"), Value("2026-11-29T18:55:28+00:00"));
}

// The 2026 column list (LASTSCHEDEVAL appended), recorded on 22.05: the evaluation time is written as the other
// squeue times are, with the host's offset; a line with a field more or fewer than that is still an error.
// GCM's 2026 node source on the same cluster: 22.05's `sinfo --all -N --json`, recorded with `sinfo-all.txt`, gives
// the same NodeData field for field, except PARTITION, where the JSON does not mark the default partition.
TEST(SlurmCollectors2205, NodesFromSinfoJsonAgreeWithTheText) {
  CannedSlurmClient client;
  client.set_output("sinfo_all_nodes", read_file(kOurs + "sinfo-all.txt"));
  client.set_output("sinfo_all_nodes_json", read_file(kOurs + "sinfo-all-N.json"));
  Captured text, json;
  SlurmSnapshotOptions o = options();
  EXPECT_EQ(collect_slurm_nodes(client, context(true), o, text), 9u);
  o.sinfo_format = SinfoFormat::Json;
  EXPECT_EQ(collect_slurm_nodes(client, context(true), o, json), 9u);
  EXPECT_EQ(client.queries().back().argv, sinfo_all_nodes_json_argv());
  ASSERT_EQ(json.size(), text.size());
  const Schema& s = node_data_schema();
  for (size_t i = 0; i < text.size(); ++i)
    for (size_t f = 0; f < s.fields.size(); ++f) {
      const std::string& name = s.fields[f].name;
      if (name == "PARTITION") {
        std::string p = text[i].at(name).as_string();
        if (p.ends_with("*")) p.pop_back();
        EXPECT_EQ(json[i].at(name), Value(p)) << "row " << i;
        continue;
      }
      EXPECT_EQ(json[i].values[f], text[i].values[f])
          << "row " << i << " field " << name << ": " << json[i].values[f].to_display_string() << " vs "
          << text[i].values[f].to_display_string();
    }
}

// Slurm 24.05's rows (written from Slurm's data_parser, tests/fixtures/slurm-docs/): the same cluster's NodeData.
TEST(SlurmCollectors2205, NodesFromSlurm2405SinfoJson) {
  CannedSlurmClient client;
  client.set_output("sinfo_all_nodes_json", read_file(kOurs + "../slurm-docs/sinfo-all-N-json-24.05.json"));
  Captured out;
  SlurmSnapshotOptions o = options();
  o.sinfo_format = SinfoFormat::Json;
  EXPECT_EQ(collect_slurm_nodes(client, context(true), o, out), 9u);
  ASSERT_EQ(out.size(), 9u);
  for (const auto& r : out.records) {
    EXPECT_EQ(r.at("num_rows"), Value(9));
    EXPECT_EQ(r.at("NUM_GPUS"), Value(2));
    EXPECT_EQ(r.at("MEMORY"), Value(4000));
    EXPECT_EQ(r.at("ACTIVE_FEATURES"), Value("(null)"));
  }
  EXPECT_EQ(out[0].at("derived_cluster"), Value("c1.gpu"));
  EXPECT_EQ(out[6].at("NODE_NAME"), Value("node6"));
  EXPECT_EQ(out[6].at("derived_cluster"), Value("c1.debug"));
  EXPECT_EQ(out[7].at("STATE"), Value("drained"));
  EXPECT_EQ(out[7].at("CPUS_OTHER"), Value(4));
  EXPECT_EQ(out[7].at("REASON"), Value("testbed: GPU fell off the bus (xid 79)"));
  EXPECT_EQ(out[7].at("TIMESTAMP"), Value("2026-11-29T18:55:26"));
  EXPECT_EQ(out[8].at("STATE"), Value("down"));

  client.set_output("sinfo_all_nodes_json", "{\"sinfo\": [{\"partition\": {}}]}");
  try {
    collect_slurm_nodes(client, context(), o, out);
    ADD_FAILURE() << "a row without partition.name was accepted";
  } catch (const SlurmError& e) {
    EXPECT_NE(std::string(e.what()).find("sinfo --all -N --json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sinfo[0]: no \"partition.name\""), std::string::npos) << e.what();
  }
}

TEST(SlurmCollectors2205, SqueueWithLastSchedEval) {
  CannedSlurmClient client;
  std::string text = read_file(kOurs + "squeue-O-lastschedeval.txt");
  client.set_output("squeue_jobs", text);
  Captured out;
  EXPECT_EQ(collect_slurm_jobs(client, context(), options(), out), 14u);
  EXPECT_EQ(client.queries().at(0).argv.at(3).ends_with(",SCHEDNODES:|#,LASTSCHEDEVAL:|#"), true);
  std::map<std::string, const Record*> by_id;
  for (const auto& r : out.records) {
    by_id[r.at("JOBID").as_string()] = &r;
    EXPECT_TRUE(r.at("LAST_SCHED_EVAL").as_string().ends_with("+00:00")) << r.at("LAST_SCHED_EVAL").as_string();
    EXPECT_TRUE(r.at("GRES_GPU_INDICES").is_null()) << "squeue has no gres_detail";
  }
  EXPECT_EQ(by_id.at("58")->at("LAST_SCHED_EVAL"), Value("2026-12-01T16:15:50+00:00"));
  EXPECT_EQ(by_id.at("56")->at("LAST_SCHED_EVAL"), Value("2026-12-01T16:14:19+00:00"));

  // One field too many, or two too few (only the last, LASTSCHEDEVAL, may be missing): the line is named.
  std::string first = text.substr(0, text.find('\n'));
  std::vector<std::string> fields;
  for (size_t at = 0, next; (next = first.find("|#", at)) != std::string::npos; at = next + 2)
    fields.push_back(first.substr(at, next - at));
  ASSERT_EQ(fields.size(), 35u);
  std::string short_by_two;
  for (size_t f = 0; f + 2 < fields.size(); ++f) short_by_two += fields[f] + "|#";
  for (const std::string& bad : {first + "extra|#", short_by_two}) {
    CannedSlurmClient c;
    c.set_output("squeue_jobs", first + "\n" + bad + "\n");
    Captured got;
    try {
      collect_slurm_jobs(c, context(), options(), got);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const SlurmError& e) {
      EXPECT_EQ(e.line(), 2u) << e.what();
    }
    EXPECT_EQ(got.size(), 1u);
  }
}

TEST(SlurmCollectors2205, ScontrolPartitionsAndConfig) {
  CannedSlurmClient client;
  client.set_output("scontrol_partitions", read_file(kOurs + "scontrol-partition.txt"));
  client.set_output("scontrol_config", read_file(kOurs + "scontrol-config.txt"));
  Captured parts;
  EXPECT_EQ(collect_scontrol_partitions(client, context(), options(), parts), 2u);
  EXPECT_EQ(parts[0].at("Partition"), Value("gpu"));
  EXPECT_EQ(parts[0].at("TresGRESGPU"), Value(12));
  EXPECT_EQ(parts[0].at("TresMEM"), Value(24000));
  // Slurm's own spelling "CPU=1.0,Mem=0.25G,GRES/gpu=4.0" (the reference read 0 for each).
  EXPECT_EQ(parts[0].at("TresBillingWeightCPU"), Value(1));
  EXPECT_EQ(parts[0].at("TresBillingWeightMEM"), Value(250));
  EXPECT_EQ(parts[0].at("TresBillingWeightGRESGPU"), Value(4));
  EXPECT_EQ(parts[1].at("MaxNodes"), Value(2));
  EXPECT_EQ(parts[1].at("Nodes"), Value("node[6-8]"));
  EXPECT_TRUE(parts[1].at("TresBillingWeightCPU").is_null());
  Captured config;
  collect_scontrol_config(client, context(), options(), config);
  ASSERT_EQ(config.size(), 1u);
  EXPECT_EQ(config[0].at("SlurmctldPort"), Value("16817"));
  EXPECT_EQ(config[0].at("WaitTime"), Value("0 sec"));
  EXPECT_EQ(config[0].at("SLURM_VERSION"), Value("22.05.8"));
  EXPECT_TRUE(config[0].at("SlurmdPort").is_int());
}

// --- failures ---

TEST(SlurmCollectors, CommandFailureNamesTheCommand) {
  CannedSlurmClient client;
  client.set_failure("sinfo_all_nodes", "slurm_load_partitions: Unable to contact slurm controller");
  Captured out;
  try {
    collect_slurm_nodes(client, context(), options(), out);
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_NE(std::string(e.what()).find("Unable to contact slurm controller"), std::string::npos);
    EXPECT_EQ(e.query(), "sinfo_all_nodes");
  }
  EXPECT_EQ(out.size(), 0u);
}

TEST(SlurmCollectors, TruncatedSqueueLineNamesTheLineAndKeepsEarlierJobs) {
  std::string text = read_file(kOurs + "squeue-O.txt");
  size_t second = text.find('\n') + 1;
  std::string truncated = text.substr(0, second) + text.substr(second, 60) + "\n" + text.substr(second);
  CannedSlurmClient client;
  client.set_output("squeue_jobs", truncated);
  Captured out;
  try {
    collect_slurm_jobs(client, context(), options(), out);
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_EQ(e.line(), 2u);
    EXPECT_NE(std::string(e.what()).find("squeue --all -O"), std::string::npos) << e.what();
  }
  EXPECT_EQ(out.size(), 1u) << "the job before the bad line was written";
}

TEST(SlurmCollectors, BadValueNamesTheLine) {
  std::string text = read_file(kOurs + "squeue-O.txt");
  size_t pos = text.find("|#0|#(null)|#\n");  // RESTARTCNT of the first job
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 3, "|#x");
  CannedSlurmClient client;
  client.set_output("squeue_jobs", text);
  Captured out;
  try {
    collect_slurm_jobs(client, context(), options(), out);
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_EQ(e.line(), 1u) << e.what();
  }
}

TEST(SlurmCollectors, GarbageSinfoIsAnError) {
  CannedSlurmClient client;
  client.set_output("sinfo_all_nodes", "garbage\nmore garbage\n");
  Captured out;
  try {
    collect_slurm_nodes(client, context(), options(), out);
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_EQ(e.line(), 1u);
    EXPECT_NE(std::string(e.what()).find("sinfo --all -N -o %all"), std::string::npos) << e.what();
  }
  std::string text = read_file(kOurs + "sinfo-all.txt");
  text += "up|(null)|4\n";  // a truncated last row
  client.set_output("sinfo_all_nodes", text);
  try {
    collect_slurm_nodes(client, context(), options(), out);
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_EQ(e.line(), 11u) << e.what();
  }
  EXPECT_EQ(out.size(), 0u) << "sinfo rows are validated before any is written";
}

TEST(SlurmCollectors, NodeGresWithOtherResourcesAndNvmlTypes) {
  std::string text = read_file(kOurs + "sinfo-all.txt");
  auto replace_first = [&](const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
  };
  replace_first("gpu:fake:2 ", "nic:1,gpu:nvidia_a100-sxm4-80gb:8(S:0-1) ");
  replace_first("gpu:fake:2 ", "nic:1 ");
  replace_first("gpu:fake:2 ", "(null) ");
  CannedSlurmClient client;
  client.set_output("sinfo_all_nodes", text);
  Captured out;
  collect_slurm_nodes(client, context(), options(), out);
  ASSERT_EQ(out.size(), 9u);
  EXPECT_EQ(out[0].at("NUM_GPUS"), Value(8));
  EXPECT_EQ(out[1].at("NUM_GPUS"), Value(0));
  EXPECT_EQ(out[2].at("NUM_GPUS"), Value(0));
  EXPECT_EQ(out[3].at("NUM_GPUS"), Value(2));
}

TEST(SlurmCollectors, ScontrolTokenWithoutKeyIsAnError) {
  CannedSlurmClient client;
  client.set_output("scontrol_partitions", "PartitionName=a MaxNodes=1\nbogus words here\n");
  Captured out;
  EXPECT_THROW(collect_scontrol_partitions(client, context(), options(), out), SlurmError);
  EXPECT_EQ(out.size(), 1u);
  client.set_output("scontrol_partitions", "No partitions in the system\n");
  Captured none;
  EXPECT_EQ(collect_scontrol_partitions(client, context(), options(), none), 0u);
  client.set_output("scontrol_config", "garbage\n");
  EXPECT_THROW(collect_scontrol_config(client, context(), options(), none), SlurmError);
}

}  // namespace
}  // namespace gcm
