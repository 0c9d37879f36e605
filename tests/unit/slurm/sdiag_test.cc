// slurm/sdiag: the Sdiag record (gcm-newer.md §1.6) from the recorded 22.05 text and a 24.05 `sdiag --all --json`
// written from the documentation. Expected values are read off the fixture files by hand.
#include "fixture_records.h"
#include "slurm/sdiag.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/json.h"
#include "slurm/parse_error.h"

namespace gcm::slurm {
namespace {

const std::string k2205 = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-22.05/";
const std::string kDocs = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-docs/";

using gcm::testing::slurp;

int64_t num(const Sdiag& s, const char* f) {
  auto v = s.get(f);
  EXPECT_TRUE(v.has_value()) << f << " is null";
  return v.value_or(-1);
}

TEST(Sdiag, SchemaHasGcmsFieldsInOrder) {
  EXPECT_EQ(kSdiag->name, "Sdiag");
  EXPECT_EQ(kSdiag->identifier, DataIdentifier::Generic);  // no graph_api sink here, see sdiag.cc
  EXPECT_EQ(kSdiag->data_type, DataType::Log);
  EXPECT_EQ(kSdiag->fields.size(), 63u);  // cluster + the 62 statistics of gcm-newer.md §1.6
  EXPECT_EQ(kSdiag->fields.front().name, "cluster");
  EXPECT_EQ(kSdiag->fields[1].name, "server_thread_count");
  EXPECT_EQ(kSdiag->fields.back().name, "rpcs_by_user_json");
  EXPECT_EQ(kSdiag->fields[kSdiag->index_of("bf_active")].type, FieldType::Bool);
  EXPECT_EQ(kSdiag->fields[kSdiag->index_of("rpcs_by_message_type_json")].type, FieldType::String);
  // That SLURMLog carries every statistic as well: slurm_monitor_sdiag_test.cc.
}

TEST(Sdiag, Text2205EverySectionItsOwnFields) {
  Sdiag s = parse_sdiag_text(slurp(k2205 + "sdiag.txt"));
  EXPECT_EQ(num(s, "server_thread_count"), 3);
  EXPECT_EQ(num(s, "agent_queue_size"), 0);
  EXPECT_EQ(num(s, "req_time"), 1795978616);
  EXPECT_EQ(num(s, "req_time_start"), 1795978526);
  EXPECT_EQ(num(s, "sdiag_jobs_submitted"), 19);
  EXPECT_EQ(num(s, "sdiag_jobs_started"), 14);
  EXPECT_EQ(num(s, "sdiag_jobs_completed"), 2);
  EXPECT_EQ(num(s, "sdiag_jobs_canceled"), 2);
  EXPECT_EQ(num(s, "sdiag_jobs_failed"), 0);
  EXPECT_EQ(num(s, "sdiag_jobs_pending"), 4);
  EXPECT_EQ(num(s, "sdiag_jobs_running"), 10);
  EXPECT_EQ(num(s, "job_states_ts"), 1795978616);
  // Main scheduler: "Total cycles: 13" here, "Total cycles: 3" under backfill.
  EXPECT_EQ(num(s, "schedule_cycle_last"), 230);
  EXPECT_EQ(num(s, "schedule_cycle_max"), 31572);
  EXPECT_EQ(num(s, "schedule_cycle_total"), 13);
  EXPECT_EQ(num(s, "schedule_cycle_mean"), 2886);
  EXPECT_EQ(num(s, "schedule_cycle_mean_depth"), 3);
  EXPECT_EQ(num(s, "schedule_cycle_per_minute"), 13);
  EXPECT_EQ(num(s, "schedule_queue_length"), 2);
  EXPECT_EQ(num(s, "bf_cycle_counter"), 3);
  EXPECT_EQ(num(s, "bf_when_last_cycle"), 1795978615);
  EXPECT_EQ(num(s, "bf_cycle_last"), 388);
  EXPECT_EQ(num(s, "bf_cycle_max"), 388);
  EXPECT_EQ(num(s, "bf_cycle_mean"), 344);
  EXPECT_EQ(num(s, "bf_last_depth"), 1);
  EXPECT_EQ(num(s, "bf_last_depth_try"), 1);
  EXPECT_EQ(num(s, "bf_depth_mean"), 1);
  EXPECT_EQ(num(s, "bf_depth_mean_try"), 1);
  EXPECT_EQ(num(s, "bf_queue_len"), 2);
  EXPECT_EQ(num(s, "bf_queue_len_mean"), 2);
  EXPECT_EQ(num(s, "bf_table_size"), 3);
  EXPECT_EQ(num(s, "bf_table_size_mean"), 3);
  EXPECT_EQ(num(s, "bf_backfilled_jobs"), 0);
  EXPECT_EQ(num(s, "gettimeofday_latency"), 82);
  EXPECT_FALSE(s.record.at("bf_active").as_bool());
  // What 22.05's text does not show stays null.
  for (const char* f : {"schedule_cycle_sum", "schedule_cycle_depth", "schedule_exit_end_job_queue", "bf_cycle_sum",
                        "bf_exit_max_time", "parts_packed", "bf_table_size_sum"})
    EXPECT_FALSE(s.get(f).has_value()) << f;
  const std::string types = s.record.at("rpcs_by_message_type_json").as_string();
  const std::string first =
      R"([{"message_type": "REQUEST_PARTITION_INFO", "type_id": 2009, "count": 18, "average_time": 911, )"
      R"("total_time": 16410}, {"message_type": )";
  EXPECT_EQ(types.substr(0, first.size()), first);
  auto users = nlohmann::json::parse(s.record.at("rpcs_by_user_json").as_string());
  ASSERT_EQ(users.size(), 4u);
  EXPECT_EQ(users[1]["user"], "alice");
  EXPECT_EQ(users[1]["user_id"], 999);
  EXPECT_EQ(users[1]["count"], 6);
  EXPECT_EQ(nlohmann::json::parse(types).size(), 14u);
}

TEST(Sdiag, TextBackfillRunningAndExitSections) {
  // The lines a newer Slurm adds, and the warning of a scrape in the middle of a backfill cycle.
  std::string text = R"(Server thread count:  3
Agent queue size:     1
Agent count:          2
Agent thread count:   3
DBD Agent queue size: 4
Main schedule statistics (microseconds):
	Total cycles: 7
Main scheduler exit:
	End of job queue: 5
	Hit default_queue_depth: 1
	Hit sched_max_job_start: 0
	Blocked on licenses: 0
	Hit max_rpc_cnt: 1
	Timeout (max_sched_time): 0
Backfilling stats (WARNING: data obtained in the middle of backfilling execution.)
	Total cycles: 2
	Last cycle when: N/A
Backfill exit
	End of job queue: 2
	Hit bf_max_job_start: 0
	Hit bf_max_job_test: 0
	System state changed: 0
	Hit table size limit (bf_node_space_size): 0
	Timeout (bf_max_time): 0
)";
  Sdiag s = parse_sdiag_text(text);
  EXPECT_EQ(num(s, "schedule_cycle_total"), 7);
  EXPECT_EQ(num(s, "bf_cycle_counter"), 2);
  EXPECT_EQ(num(s, "schedule_exit_end_job_queue"), 5);
  EXPECT_EQ(num(s, "schedule_exit_default_queue_depth"), 1);
  EXPECT_EQ(num(s, "schedule_exit_max_rpc_cnt"), 1);
  EXPECT_EQ(num(s, "bf_exit_end_job_queue"), 2);
  EXPECT_EQ(num(s, "bf_exit_max_time"), 0);
  EXPECT_FALSE(s.get("bf_when_last_cycle").has_value());
  EXPECT_TRUE(s.record.at("bf_active").as_bool());
  EXPECT_EQ(s.record.at("rpcs_by_user_json").as_string(), "[]");
}

TEST(Sdiag, TextBadValueNamesTheLineAndLabel) {
  try {
    parse_sdiag_text("Server thread count:  3\nAgent queue size: lots\n");
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Agent queue size:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_sdiag_text("Server thread count: 1\nAgent queue size: 1\nAgent count: 1\n"), ParseError);
}

TEST(Sdiag, Json2405FromTheDocumentation) {
  Sdiag s = parse_sdiag_json(slurp(kDocs + "sdiag-all-json-24.05.json"));
  EXPECT_EQ(num(s, "server_thread_count"), 4);
  EXPECT_EQ(num(s, "agent_thread_count"), 6);
  EXPECT_EQ(num(s, "req_time"), 1796140800);  // {set, infinite, number}
  EXPECT_EQ(num(s, "req_time_start"), 1796137200);
  EXPECT_EQ(num(s, "job_states_ts"), 1796140790);
  EXPECT_EQ(num(s, "bf_when_last_cycle"), 1796140781);
  EXPECT_EQ(num(s, "schedule_cycle_sum"), 2451190);
  EXPECT_EQ(num(s, "schedule_cycle_depth"), 20417);
  EXPECT_EQ(num(s, "schedule_exit_end_job_queue"), 1190);
  EXPECT_EQ(num(s, "schedule_exit_default_queue_depth"), 9);
  EXPECT_EQ(num(s, "schedule_exit_max_sched_time"), 1);
  EXPECT_EQ(num(s, "sdiag_jobs_submitted"), 812);
  EXPECT_EQ(num(s, "sdiag_jobs_running"), 30);
  EXPECT_EQ(num(s, "bf_exit_max_job_test"), 6);  // from bf_exit.bf_max_job_test
  EXPECT_EQ(num(s, "bf_exit_max_time"), 2);
  EXPECT_EQ(num(s, "bf_exit_end_job_queue"), 110);
  EXPECT_EQ(num(s, "bf_table_size_sum"), 1416);
  EXPECT_EQ(num(s, "parts_packed"), 1);
  EXPECT_FALSE(s.record.at("bf_active").as_bool());
  // The tables as Python's json.dumps writes them: input key order, ", " and ": ".
  EXPECT_EQ(s.record.at("rpcs_by_user_json").as_string(),
            R"([{"user_id": 0, "user": "root", "count": 4901, "total_time": 9123456, "average_time": )"
            R"({"set": true, "infinite": false, "number": 1861}}, {"user_id": 1001, "user": "alice", "count": 300, )"
            R"("total_time": 839001, "average_time": {"set": true, "infinite": false, "number": 2796}}])");
}

TEST(Sdiag, JsonUnsetInfiniteMissingAndWrongTypes) {
  const std::string head =
      R"({"statistics":{"server_thread_count":1,"agent_queue_size":2,"agent_count":3,"agent_thread_count":4,)"
      R"("dbd_agent_queue_size":5)";
  Sdiag s = parse_sdiag_json(head + R"(,"req_time":{"set":false,"infinite":false,"number":0},)"
                                    R"("bf_when_last_cycle":{"set":true,"infinite":true,"number":0},"bf_active":1}})");
  EXPECT_FALSE(s.get("req_time").has_value());
  EXPECT_FALSE(s.get("bf_when_last_cycle").has_value());
  EXPECT_FALSE(s.get("schedule_exit_licenses").has_value());
  EXPECT_TRUE(s.record.at("bf_active").as_bool());
  EXPECT_EQ(s.record.at("rpcs_by_message_type_json").as_string(), "[]");
  try {
    parse_sdiag_json(head + R"(,"jobs_started":"many"}})");
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("statistics.jobs_started"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_sdiag_json(head + R"(,"schedule_exit":7}})"), ParseError);
  EXPECT_THROW(parse_sdiag_json(R"({"statistics":{"server_thread_count":1}})"), ParseError);
  EXPECT_THROW(parse_sdiag_json("not json"), ParseError);
}

// Moved from slurm_monitor_test.cc (SlurmMonitor.MissingSdiagLabelIsAnError) with the parser.
TEST(Sdiag, MissingLabelIsAnError) {
  EXPECT_THROW(parse_sdiag_text("Server thread count: 3\n"), ParseError);
  Sdiag s = parse_sdiag_text(slurp(k2205 + "sdiag.txt"));
  EXPECT_EQ(s.get("server_thread_count"), 3);
  EXPECT_THROW(parse_sdiag_json("{}"), ParseError);
}

}  // namespace
}  // namespace gcm::slurm
