// Golden tests on the reference implementation's own corpus (../shared/fixtures/gcm, gcm-reference.md §7): the
// outputs its tests feed to sinfo/squeue/sacct/scontrol parsers and shelper, with the values its tests expect.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "slurm/coerce.h"
#include "slurm/delimited.h"
#include "slurm/duration.h"
#include "slurm/gres.h"
#include "slurm/hostlist.h"
#include "slurm/job_state.h"
#include "slurm/memory.h"
#include "slurm/node_state.h"
#include "slurm/sacct_lines.h"
#include "slurm/scontrol.h"
#include "slurm/timestamp.h"
#include "slurm/tres.h"

namespace gcm::slurm {
namespace {

const std::string kFixtures = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm";

std::string read_fixture(const std::string& name) {
  std::ifstream in(kFixtures + "/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

#define REQUIRE_FIXTURE(name)                                                                    \
  if (!std::filesystem::exists(kFixtures + "/" + (name)))                                        \
  GTEST_SKIP() << "reference fixture " << (name) << " not present (expected under " << kFixtures \
               << "); golden test skipped"

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  for_each_line(text, [&](std::string_view l) { out.emplace_back(l); });
  return out;
}

// --- shelper: scontrol show job -d blocks (§4.1, §7.4) ---

// What shelper's AttributeGPU2SlurmMetadata derives from one job block for a host.
struct GpuAttribution {
  std::string job_id, job_name, qos, user, partition, account, num_nodes, array_job_id, array_task_id;
  std::set<int> gpus;
};

// The same attribution with this library: blocks whose NodeList contains host, metadata from their keys, GPU
// indices from every GRES= detail line. Both the shelper-compatible index reader and the structured GRES parser
// must agree.
std::vector<GpuAttribution> attribute(std::string_view text, std::string_view host) {
  std::vector<GpuAttribution> out;
  for (const ScontrolRecord& r : parse_scontrol_records(text)) {
    auto nodelist = r.get("NodeList");
    if (!nodelist || !hostlist_contains(*nodelist, host)) continue;
    GpuAttribution a;
    std::string_view user = r.get("UserId").value_or("");
    a.user = user.substr(0, user.find('('));
    a.job_id = r.get("JobId").value_or("");
    a.job_name = r.get("JobName").value_or("");
    a.qos = r.get("QOS").value_or("");
    a.partition = r.get("Partition").value_or("");
    a.account = r.get("Account").value_or("");
    a.num_nodes = r.get("NumNodes").value_or("");
    a.array_job_id = r.get("ArrayJobId").value_or("");
    std::string_view task = r.get("ArrayTaskId").value_or("");
    if (python_int(task)) a.array_task_id = task;  // "28-59%100" names many tasks: not one
    for (std::string_view gres : r.all("GRES")) {
      std::vector<int> by_shelper = shelper_gres_indices(gres);
      std::vector<int> structured = gres_indices(parse_gres_list(gres));
      EXPECT_EQ(by_shelper, structured) << gres;
      a.gpus.insert(structured.begin(), structured.end());
    }
    out.push_back(std::move(a));
  }
  return out;
}

TEST(SlurmGolden, ShelperAllGpus) {
  REQUIRE_FIXTURE("shelper/scontrol_out_all_gpus.txt");
  auto jobs = attribute(read_fixture("shelper/scontrol_out_all_gpus.txt"), "node1751");
  ASSERT_EQ(jobs.size(), 1u);
  const GpuAttribution& a = jobs[0];
  EXPECT_EQ(a.gpus, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(a.user, "test_username");
  EXPECT_EQ(a.job_name, "demo_ods");
  EXPECT_EQ(a.qos, "normal");
  EXPECT_EQ(a.job_id, "30214");
  EXPECT_EQ(a.array_job_id, "30185");
  EXPECT_EQ(a.array_task_id, "28");
  EXPECT_EQ(a.account, "test_account");
  EXPECT_EQ(a.partition, "learn");
  EXPECT_EQ(a.num_nodes, "1");
  EXPECT_TRUE(attribute(read_fixture("shelper/scontrol_out_all_gpus.txt"), "node1752").empty());
}

TEST(SlurmGolden, ShelperSomeAndNoGpus) {
  REQUIRE_FIXTURE("shelper/scontrol_out_some_gpus.txt");
  auto some = attribute(read_fixture("shelper/scontrol_out_some_gpus.txt"), "node1751");
  ASSERT_EQ(some.size(), 1u);
  EXPECT_EQ(some[0].gpus, (std::set<int>{0, 1, 2, 3}));
  auto none = attribute(read_fixture("shelper/scontrol_out_no_gpus.txt"), "node1751");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_TRUE(none[0].gpus.empty()) << "GRES= is empty: no GPU is attributed";
}

TEST(SlurmGolden, ShelperArrayJobsInTwoBlocks) {
  REQUIRE_FIXTURE("shelper/scontrol_out_main_array_job.txt");
  auto jobs = attribute(read_fixture("shelper/scontrol_out_main_array_job.txt"), "node1751");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].job_id, "30214");
  EXPECT_EQ(jobs[0].array_task_id, "") << "ArrayTaskId=28-59%100 is not one task";
  EXPECT_EQ(jobs[0].account, "test2_account");
  EXPECT_EQ(jobs[0].gpus, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(jobs[1].job_id, "31214");
  EXPECT_EQ(jobs[1].array_task_id, "128");
  EXPECT_EQ(jobs[1].user, "test_username_2");
  EXPECT_EQ(jobs[1].qos, "dev");
  EXPECT_EQ(jobs[1].num_nodes, "3");
  EXPECT_EQ(jobs[1].gpus, (std::set<int>{5, 6, 7}));
}

TEST(SlurmGolden, ShelperRepeatedEntry) {
  REQUIRE_FIXTURE("shelper/scontrol_out_repeated_entry.txt");
  const std::string text = read_fixture("shelper/scontrol_out_repeated_entry.txt");
  auto records = parse_scontrol_records(text);
  ASSERT_EQ(records.size(), 2u);
  std::set<std::string> hosts;
  for (const auto& r : records) {
    for (const auto& h : expand_hostlist(*r.get("NodeList"))) hosts.insert(h);
    EXPECT_EQ(r.get("BatchHost"), "node1751");
    EXPECT_EQ(r.get("AllocNode:Sid"), "node4014:1839813");
    EXPECT_EQ(tres_value(*r.get("AllocTRES"), "mem"), 1792000);
    EXPECT_EQ(elapsed_string_to_seconds(*r.get("TimeLimit")), 12 * 3600);
  }
  EXPECT_EQ(hosts, std::set<std::string>{"node1751"});
}

// --- squeue -O ...:|# (§1.5, §1.12, §7.1) ---

const std::vector<std::string> kSqueueColumns = {
    "TRES-PER-NODE", "MINCPUS",     "JOBARRAYID", "JOBID",     "NAME",       "TIMELIMIT",  "MINMEMORY",
    "COMMAND",       "PRIORITY",    "STATE",      "USERNAME",  "NUMCPUS",    "NUMNODES",   "TIMELEFT",
    "TIMEUSED",      "NODELIST",    "DEPENDENCY", "EXCNODES",  "STARTTIME",  "SUBMITTIME", "ELIGIBLETIME",
    "ACCRUETIME",    "PENDINGTIME", "COMMENT",    "PARTITION", "ACCOUNT",    "QOS",        "REASON",
    "TRES-ALLOC",    "RESERVATION", "REQUEUE",    "FEATURE",   "RESTARTCNT", "SCHEDNODES"};

TEST(SlurmGolden, SqueueOutput) {
  REQUIRE_FIXTURE("sample-squeue-output.txt");
  DelimitedOptions o;
  o.delimiter = "|#";
  o.header = false;
  o.columns = kSqueueColumns;
  o.trailing_delimiter = true;
  std::vector<std::map<std::string, std::string>> jobs;
  parse_delimited(read_fixture("sample-squeue-output.txt"), o, [&](const DelimitedHeader& h, const DelimitedRow& r) {
    std::map<std::string, std::string> m;
    for (size_t i = 0; i < h.size(); ++i) m[h.names()[i]] = r[i];
    jobs.push_back(std::move(m));
  });
  ASSERT_EQ(jobs.size(), 5u);
  std::vector<int64_t> gpus, min_memory, tres_gpus;
  for (auto& j : jobs) {
    gpus.push_back(gres_or_tres_gpu_count(j["TRES-PER-NODE"]));
    min_memory.push_back(convert_memory_to_mb(j["MINMEMORY"]));
    tres_gpus.push_back(tres_value(j["TRES-ALLOC"], "gres/gpu"));
    EXPECT_GE(non_negative_int(j["RESTARTCNT"]), 1);
    EXPECT_TRUE(parse_duration(j["TIMELIMIT"])->finite());
    EXPECT_TRUE(parse_duration(j["TIMEUSED"])->finite());
    EXPECT_TRUE(maybe_float(j["PRIORITY"]).has_value());
    EXPECT_EQ(nodelist_or_null(j["SCHEDNODES"])->size(), j["SCHEDNODES"] == "node[1381-1383]" ? 3u : 1u);
  }
  EXPECT_EQ(gpus, (std::vector<int64_t>{0, 1, 8, 0, 8}));
  EXPECT_EQ(min_memory, (std::vector<int64_t>{0, 60000, 60000, 10500, 1000000}));
  EXPECT_EQ(tres_gpus, (std::vector<int64_t>{2, 1, 256, 0, 160}));
  EXPECT_EQ(tres_value(jobs[4]["TRES-ALLOC"], "mem"), 1280500);
  EXPECT_EQ(maybe_int(jobs[0]["PENDINGTIME"]), 100);
  EXPECT_EQ(jobs[4]["JOBARRAYID"], "42271120_[7-8%1]");

  const std::string nodelist = jobs[2]["NODELIST"];
  auto nodes = nodelist_or_null(nodelist);
  ASSERT_TRUE(nodes.has_value());
  EXPECT_EQ(nodes->size(), 32u);
  EXPECT_EQ(nodes->front(), "node1281");
  EXPECT_EQ(nodes->back(), "node1384");
  EXPECT_EQ(compress_hostlist(*nodes), nodelist) << "Slurm's own spelling is already canonical";

  // The pending job: empty NODELIST is null, START_TIME N/A passes through, the reason is not a resource wait.
  EXPECT_EQ(nodelist_or_null(jobs[3]["NODELIST"]), std::nullopt);
  EXPECT_EQ(time_to_time_aware(jobs[3]["STARTTIME"], TimeZone(), TimeZone()), "N/A");
  EXPECT_TRUE(is_pending_job_state(jobs[3]["STATE"]));
  EXPECT_FALSE(is_pending_on_resources(jobs[3]["STATE"], jobs[3]["REASON"]));
  EXPECT_EQ(jobs[3]["REASON"], "DependencyNeverSatisfied");
  EXPECT_TRUE(is_running_job_state(jobs[0]["STATE"]));
  EXPECT_EQ(time_to_time_aware(jobs[0]["SUBMITTIME"], TimeZone(), TimeZone()), "2025-04-10T13:44:39+00:00");
}

// --- sinfo -N -o %all (§1.8, §1.12, §7.1) ---

TEST(SlurmGolden, SinfoAllOutput) {
  REQUIRE_FIXTURE("sample-sinfo-output.txt");
  std::vector<std::string> names, states, users, reservations, free_mem;
  std::vector<int64_t> gpus;
  std::vector<NodeState> node_states;
  DelimitedOptions o;
  o.length_mismatch = RowLengthPolicy::DropExtraSkipShort;  // the first row ends with an extra '|'
  DelimitedParser parser(o);
  auto on_row = [&](const DelimitedHeader& h, const DelimitedRow& r) {
    names.emplace_back(r[*h.reference_index("NODELIST")]);
    states.emplace_back(r[*h.reference_index("STATE")]);
    users.emplace_back(r[*h.reference_index("USER")]);
    reservations.emplace_back(r[*h.reference_index("RESERVATION")]);
    free_mem.emplace_back(r[*h.reference_index("FREE_MEM")]);
    gpus.push_back(gres_gpu_count(r[*h.reference_index("GRES")]));
    node_states.push_back(parse_node_state(r[*h.reference_index("STATE")]));
    CpuStates cpus = parse_cpu_states(r[*h.reference_index("CPUS(A/I/O/T)")]);
    EXPECT_EQ(cpus.total, 80);
    EXPECT_EQ(maybe_int(r[*h.reference_index("MEMORY")]), 500000);
  };
  for_each_line(read_fixture("sample-sinfo-output.txt"), [&](std::string_view line) {
    if (const DelimitedRow* r = parser.feed(line)) on_row(parser.header(), *r);
  });
  EXPECT_EQ(parser.mismatched_rows(), 1u);
  EXPECT_EQ(parser.skipped_rows(), 0u);
  EXPECT_EQ(names, (std::vector<std::string>{"node0201", "node0201", "node1537", "node4180"}));
  EXPECT_EQ(states, (std::vector<std::string>{"drained*", "drained*", "allocated", "allocated"}));
  EXPECT_EQ(users, (std::vector<std::string>{"root", "root", "Unknown", "Unknown"}));
  EXPECT_EQ(reservations, (std::vector<std::string>{"", "test_reservation", "test_reservation", "test_reservation"}));
  EXPECT_EQ(gpus, (std::vector<int64_t>{8, 8, 8, 2}));
  EXPECT_EQ(maybe_int(free_mem[0]), std::nullopt);
  EXPECT_EQ(maybe_int(free_mem[2]), 210288);
  EXPECT_EQ(maybe_int(free_mem[3]), 449512);
  EXPECT_TRUE(node_states[0].is_down());
  EXPECT_TRUE(node_states[0].has(NodeFlag::NotResponding));
  EXPECT_EQ(node_states[0].counted_state(), "drained");
  EXPECT_TRUE(node_states[2].is_running_jobs());
  EXPECT_FALSE(node_states[2].is_down());
}

// --- scontrol show partition -o (§1.18, §7.1) ---

TEST(SlurmGolden, ScontrolPartitions) {
  REQUIRE_FIXTURE("sample-scontrol-output.txt");
  std::string text = read_fixture("sample-scontrol-output.txt");
  auto parts = parse_scontrol_records(text);
  ASSERT_EQ(parts.size(), 3u);
  std::vector<int64_t> max_nodes;
  for (const auto& p : parts) {
    max_nodes.push_back(parse_scontrol_maxnodes(*p.get("MaxNodes")));
    // Slurm's own node count must equal the expansion of its node list.
    EXPECT_EQ(Hostlist::parse(*p.get("Nodes")).size(), static_cast<uint64_t>(*maybe_int(*p.get("TotalNodes"))))
        << *p.get("PartitionName");
  }
  EXPECT_EQ(max_nodes, (std::vector<int64_t>{-1, 64, -1}));
  EXPECT_EQ(*parts[0].get("PartitionName"), "partition1");
  EXPECT_EQ(tres_value(*parts[0].get("TRES"), "mem"), 1770000000);
  EXPECT_EQ(tres_value(*parts[0].get("TRESBillingWeights"), "mem"), 125);
  EXPECT_EQ(parts[1].get("TRES"), std::nullopt);
  EXPECT_EQ(tres_value(*parts[1].get("TRESBillingWeights"), "cpu"), 2);
  EXPECT_EQ(tres_value(*parts[1].get("TRESBillingWeights"), "mem"), 250);
  EXPECT_EQ(tres_value(*parts[1].get("TRESBillingWeights"), "gres/gpu"), 32);
  EXPECT_EQ(canonical_hostlist(*parts[1].get("Nodes")), "node[1-1320,1322-1470]");
  EXPECT_EQ(*parts[2].get("PreemptMode"), "OFF");
  EXPECT_EQ(tres_value(*parts[2].get("TRESBillingWeights"), "mem"), 0);
  EXPECT_EQ(maybe_int(*parts[0].get("PriorityTier")), 10);
}

// --- scontrol show config (§1.18, §7.1) ---

TEST(SlurmGolden, ScontrolShowConfig) {
  REQUIRE_FIXTURE("sample-scontrol-show-config-output.txt");
  std::string text = read_fixture("sample-scontrol-show-config-output.txt");
  std::map<std::string, std::string> config;
  for (const KeyValue& kv : parse_scontrol_config(text)) config[std::string(kv.key)] = kv.value;
  EXPECT_EQ(maybe_int(config.at("AccountingStoragePort")), 6819);
  EXPECT_EQ(maybe_int(config.at("JobCompPort")), 0);
  EXPECT_EQ(config.at("AcctGatherNodeFreq"), "0 sec");
  EXPECT_EQ(maybe_int(config.at("AcctGatherNodeFreq")), std::nullopt);
  EXPECT_EQ(config.at("BOOT_TIME"), "2023-07-11T14:15:02");
  EXPECT_EQ(config.at("ClusterName"), "cluster_name");
  EXPECT_EQ(config.count("Configuration data as of 2023-08-02T15:34:19"), 0u);
}

// --- sacct -P (§1.13, §1.14, §1.7, §7.1) ---

TEST(SlurmGolden, SacctParsable) {
  REQUIRE_FIXTURE("sample-sacct-output.txt");
  if (!std::filesystem::exists("/usr/share/zoneinfo/America/Los_Angeles")) GTEST_SKIP() << "no zoneinfo";
  TimeZone la = TimeZone::load("America/Los_Angeles");
  size_t n = 0;
  std::set<std::string> end_dates;
  parse_delimited(read_fixture("sample-sacct-output.txt"), {}, [&](const DelimitedHeader& h, const DelimitedRow& r) {
    ++n;
    EXPECT_EQ(r.fields.size(), h.size());
    // sacct_publish: End in the sacct time zone (here the host's, Los Angeles), then its Pacific date.
    end_dates.insert(format_date(in_zone(parse_timestamp(r[*h.first("End")], la), la)));
    EXPECT_GE(elapsed_string_to_seconds(r[*h.first("Elapsed")]), 0);
    EXPECT_TRUE(parse_duration(r[*h.first("TotalCPU")]).has_value());
    EXPECT_FALSE(parse_job_state(r[*h.first("State")]).name.empty());
    for (const TresEntry& e : parse_tres_entries(r[*h.first("AllocTRES")])) EXPECT_GE(tres_entry_number(e), 0);
    // TRES usage reports memory in K (design.md §5: the reference rejected that suffix).
    for (const TresEntry& e : parse_tres_entries(r[*h.first("TRESUsageInAve")])) {
      if (e.key == "mem") {
        EXPECT_GE(convert_memory_to_mb(e.value), 0);
      }
    }
    std::string_view nodelist = r[*h.first("NodeList")];
    if (nodelist != "None assigned") {
      EXPECT_TRUE(nodelist_or_null(nodelist).has_value()) << nodelist;
    }
  });
  EXPECT_EQ(n, 68u);
  EXPECT_EQ(end_dates, std::set<std::string>{"2020-11-16"});
}

TEST(SlurmGolden, SacctInvalidLineNamesTheLine) {
  REQUIRE_FIXTURE("sample-sacct-output-with-invalid-lines.txt");
  std::string text = read_fixture("sample-sacct-output-with-invalid-lines.txt");
  DelimitedOptions o;
  o.trim_values = false;
  o.trim_line = true;
  try {
    parse_delimited(text, o, [](const DelimitedHeader&, const DelimitedRow&) {});
    FAIL() << "no error";
  } catch (const DelimitedError& e) {
    EXPECT_EQ(e.line(), 2u);
  }
  o.length_mismatch = RowLengthPolicy::Skip;
  DelimitedParser p(o);
  for_each_line(text, [&](std::string_view l) { EXPECT_EQ(p.feed(l), nullptr); });
  EXPECT_EQ(p.skipped_rows(), 1u);
}

TEST(SlurmGolden, SacctMultilineRepair) {
  for (const char* base : {"sample-sacct-one-multiline", "sample-sacct-multiple-multiline"}) {
    REQUIRE_FIXTURE(std::string(base) + ".txt");
    SacctLineRepair repair("|#");
    std::vector<std::string> repaired;
    for (const std::string& line : lines_of(read_fixture(std::string(base) + ".txt"))) {
      if (auto logical = repair.feed(line)) repaired.emplace_back(*logical);
    }
    EXPECT_FALSE(repair.pending()) << base;
    EXPECT_EQ(repaired, lines_of(read_fixture(std::string(base) + "-expected.txt"))) << base;
    // Every repaired record now has the header's field count.
    DelimitedOptions o;
    o.delimiter = "|#";
    o.trim_values = false;
    DelimitedParser p(o);
    size_t rows = 0;
    for (const auto& l : repaired) rows += p.feed(l) != nullptr;
    EXPECT_EQ(rows, repaired.size() - 1) << base;
  }
}

TEST(SlurmGolden, SacctRunningOutputs) {
  REQUIRE_FIXTURE("sample-sacct-running-output-large.txt");
  for (auto [name, expected_rows] :
       {std::pair{"sample-sacct-running-output.txt", 10u}, std::pair{"sample-sacct-running-output-large.txt", 5040u}}) {
    DelimitedOptions o;
    o.delimiter = "|#";
    SacctLineRepair repair("|#");
    DelimitedParser p(o);
    size_t running = 0;
    for (const std::string& line : lines_of(read_fixture(name))) {
      auto logical = repair.feed(line);
      if (!logical) continue;
      if (const DelimitedRow* r = p.feed(*logical)) {
        running += is_running_job_state(r->fields[*p.header().first("State")]);
        std::string_view nodelist = r->fields[*p.header().first("NodeList")];
        EXPECT_TRUE(nodelist_or_null(nodelist).has_value()) << nodelist;
      }
    }
    EXPECT_EQ(p.rows(), expected_rows) << name;
    EXPECT_EQ(running, expected_rows) << name << ": sacct -s running";
  }
}

// --- sacctmgr show qos -P (§1.17, §7.1) ---

TEST(SlurmGolden, SacctmgrQos) {
  REQUIRE_FIXTURE("sample-sacctmgr-qos.txt");
  DelimitedOptions o;
  o.length_mismatch = RowLengthPolicy::Zip;
  o.trim_values = false;
  nlohmann::json rows = nlohmann::json::array();
  parse_delimited(read_fixture("sample-sacctmgr-qos.txt"), o, [&](const DelimitedHeader& h, const DelimitedRow& r) {
    nlohmann::json row = nlohmann::json::object();
    for (size_t i = 0; i < h.size() && r.has(i); ++i) row[h.names()[i]] = std::string(r[i]);
    rows.push_back(row);
  });
  EXPECT_EQ(rows, nlohmann::json::parse(read_fixture("sample-sacctmgr-qos-expected.json")));
}

}  // namespace
}  // namespace gcm::slurm
