// sinfo's JSON (both layouts) and sinfo's long node states, as slurm_job_monitor's JSON node source reads them.
#include "slurm/sinfo_json.h"

#include <gtest/gtest.h>

#include "text_file.h"

namespace gcm::slurm {
namespace {

const std::string kFixtures = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/";

using gcm::testing::read_file;

// Slurm's node_state_string, lower case: the base, the one flag symbol by priority, and the words that replace it.
TEST(SinfoLongState, FollowsSlurmsRules) {
  using W = std::vector<std::string>;
  EXPECT_EQ(sinfo_long_state(W{"IDLE"}), "idle");
  EXPECT_EQ(sinfo_long_state(W{"mixed"}), "mixed");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "DRAIN"}), "drained");
  EXPECT_EQ(sinfo_long_state(W{"MIXED", "DRAIN"}), "draining");
  EXPECT_EQ(sinfo_long_state(W{"ALLOCATED", "DRAIN", "NOT_RESPONDING"}), "draining*");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "DRAIN", "COMPLETING"}), "draining");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "DRAIN", "MAINTENANCE", "NOT_RESPONDING"}), "drained$");
  EXPECT_EQ(sinfo_long_state(W{"DOWN", "NOT_RESPONDING"}), "down*");
  EXPECT_EQ(sinfo_long_state(W{"DOWN", "DRAIN"}), "drained");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "FAIL"}), "fail");
  EXPECT_EQ(sinfo_long_state(W{"ALLOCATED", "FAIL"}), "failing");
  EXPECT_EQ(sinfo_long_state(W{"ALLOCATED", "COMPLETING"}), "allocated+");
  EXPECT_EQ(sinfo_long_state(W{"ALLOCATED", "NOT_RESPONDING"}), "allocated*");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "COMPLETING"}), "completing");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "MAINTENANCE"}), "maint");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "MAINTENANCE", "NOT_RESPONDING"}), "maint*");
  EXPECT_EQ(sinfo_long_state(W{"MIXED", "MAINTENANCE"}), "mixed$");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "REBOOT_ISSUED"}), "reboot^");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "REBOOT_REQUESTED"}), "reboot");
  EXPECT_EQ(sinfo_long_state(W{"DOWN", "REBOOT_REQUESTED", "NOT_RESPONDING"}), "reboot*");
  EXPECT_EQ(sinfo_long_state(W{"MIXED", "REBOOT_REQUESTED"}), "mixed@");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "POWERED_DOWN"}), "idle~");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "POWERING_UP"}), "idle#");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "POWERING_DOWN", "POWERED_DOWN"}), "idle%");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "POWER_DOWN"}), "idle!");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "RESERVED"}), "reserved");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "PLANNED"}), "planned");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "INVALID_REG", "DRAIN"}), "inval");
  EXPECT_EQ(sinfo_long_state(W{"FUTURE"}), "future");
  EXPECT_EQ(sinfo_long_state(W{"UNKNOWN", "NOT_RESPONDING"}), "unknown*");
  EXPECT_EQ(sinfo_long_state(W{"IDLE", "CLOUD"}), "idle");
  EXPECT_THROW(sinfo_long_state(W{}), ParseError);
}

// Slurm 23.11+ rows (data_parser v0.0.41, written from Slurm's parsers): one entry per row and node name.
TEST(SinfoJson, RowsOfSlurm2405) {
  auto nodes = parse_sinfo_json(read_file(kFixtures + "slurm-docs/sinfo-all-N-json-24.05.json"));
  ASSERT_EQ(nodes.size(), 9u);
  EXPECT_EQ(nodes[0].name, "node1");
  EXPECT_EQ(nodes[0].partition, "gpu");
  EXPECT_EQ(nodes[0].state, "mixed");
  EXPECT_EQ(nodes[0].cpus_allocated, 2);
  EXPECT_EQ(nodes[0].cpus_idle, 2);
  EXPECT_EQ(nodes[0].cpus_other, 0);
  EXPECT_EQ(nodes[0].cpus_total, 4);
  EXPECT_EQ(nodes[0].free_mem, 19355);
  EXPECT_EQ(nodes[0].memory, 4000);
  EXPECT_EQ(nodes[0].gres, "gpu:fake:2");
  EXPECT_EQ(nodes[0].reason, "none");
  EXPECT_EQ(nodes[0].user, "Unknown");
  EXPECT_EQ(nodes[0].timestamp, "Unknown");
  EXPECT_EQ(nodes[5].name, "node6");
  EXPECT_EQ(nodes[6].name, "node6");
  EXPECT_EQ(nodes[6].partition, "debug");
  EXPECT_EQ(nodes[7].state, "drained");
  EXPECT_EQ(nodes[7].cpus_other, 4);
  EXPECT_EQ(nodes[7].reason, "testbed: GPU fell off the bus (xid 79)");
  EXPECT_EQ(nodes[7].user, "root");
  EXPECT_EQ(nodes[7].timestamp, "2026-11-29T18:55:26");
  EXPECT_EQ(nodes[8].state, "down");
}

// Slurm 22.05's node records (recorded): a row per partition, and a down or drained node's CPUs counted as other, as
// sinfo -N prints them.
TEST(SinfoJson, NodeRecordsOfSlurm2205) {
  auto nodes = parse_sinfo_json(read_file(kFixtures + "slurm-22.05/sinfo-all-N.json"));
  ASSERT_EQ(nodes.size(), 9u);
  EXPECT_EQ(nodes[5].name, "node6");
  EXPECT_EQ(nodes[5].partition, "gpu");
  EXPECT_EQ(nodes[6].name, "node6");
  EXPECT_EQ(nodes[6].partition, "debug");
  EXPECT_EQ(nodes[7].name, "node7");
  EXPECT_EQ(nodes[7].state, "drained");
  EXPECT_EQ(nodes[7].cpus_idle, 0);
  EXPECT_EQ(nodes[7].cpus_other, 4);
  EXPECT_EQ(nodes[7].user, "root");
  EXPECT_EQ(nodes[8].state, "down");
  EXPECT_EQ(nodes[8].cpus_other, 4);
  EXPECT_EQ(nodes[2].state, "allocated");
  EXPECT_EQ(nodes[2].cpus_allocated, 4);
}

TEST(SinfoJson, MalformedInputNamesTheRowAndTheKey) {
  auto error = [](const std::string& text) {
    try {
      parse_sinfo_json(text);
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error("{\"sinfo\": [{\"partition\": {\"name\": \"gpu\"}}]}"), "sinfo --json: sinfo[0]: no \"cpus\"");
  EXPECT_EQ(error("{\"nodes\": [{\"name\": 7}]}"), "sinfo --json: nodes[0]: name is not a string");
  EXPECT_EQ(error("{\"meta\": {}}"),
            "sinfo --json output has neither \"sinfo\" (Slurm 23.11+) nor \"nodes\" (22.05-23.02)");
  EXPECT_EQ(error("[1]"), "sinfo --json output is not a JSON object");
  EXPECT_EQ(error("{\"sinfo\": ["), "sinfo --json output is not valid JSON");
  EXPECT_NE(error(std::string(200, '[')).find("nested deeper than"), std::string::npos);
}

}  // namespace
}  // namespace gcm::slurm
