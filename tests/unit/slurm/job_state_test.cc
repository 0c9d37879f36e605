#include <gtest/gtest.h>

#include "slurm/job_state.h"
#include "slurm/node_state.h"

namespace gcm::slurm {
namespace {

TEST(SlurmNodeState, EveryFlagSymbol) {
  struct Case {
    const char* text;
    NodeFlag flag;
  } cases[] = {{"down*", NodeFlag::NotResponding},      {"idle~", NodeFlag::PoweredDown},
               {"idle#", NodeFlag::PoweringUp},         {"idle!", NodeFlag::PowerDownPending},
               {"idle%", NodeFlag::PoweringDown},       {"mixed$", NodeFlag::MaintReservation},
               {"allocated@", NodeFlag::RebootPending}, {"idle^", NodeFlag::RebootIssued},
               {"idle-", NodeFlag::PlannedByBackfill},  {"allocated+", NodeFlag::MoreStates}};
  for (const auto& c : cases) {
    NodeState s = parse_node_state(c.text);
    EXPECT_TRUE(s.has(c.flag)) << c.text;
    EXPECT_EQ(s.flags, static_cast<uint16_t>(c.flag)) << c.text << ": no other flag";
    EXPECT_TRUE(s.extra.empty()) << c.text;
  }
  EXPECT_EQ(parse_node_state("down*").base, "down");
  EXPECT_EQ(parse_node_state("allocated+").base, "allocated");
  NodeState several = parse_node_state("drained*$@");
  EXPECT_EQ(several.base, "drained");
  EXPECT_TRUE(several.has(NodeFlag::NotResponding));
  EXPECT_TRUE(several.has(NodeFlag::MaintReservation));
  EXPECT_TRUE(several.has(NodeFlag::RebootPending));
  EXPECT_FALSE(several.has(NodeFlag::PoweredDown));
}

TEST(SlurmNodeState, CompoundAndCase) {
  NodeState s = parse_node_state("IDLE+CLOUD+POWERED_DOWN");
  EXPECT_EQ(s.base, "idle");
  EXPECT_EQ(s.extra, (std::vector<std::string>{"cloud", "powered_down"}));
  EXPECT_TRUE(s.has_state("cloud"));
  EXPECT_FALSE(s.has_state("drain"));
  s = parse_node_state("mixed+drain");
  EXPECT_EQ(s.base, "mixed");
  EXPECT_TRUE(s.has_state("drain"));
  EXPECT_TRUE(s.is_running_jobs());
  EXPECT_EQ(s.counted_state(), "");
  s = parse_node_state("DOWN*+DRAIN");
  EXPECT_EQ(s.base, "down");
  EXPECT_TRUE(s.has(NodeFlag::NotResponding));
  EXPECT_EQ(parse_node_state("DRAINING").base, "draining");
  EXPECT_EQ(parse_node_state("mix").base, "mixed");
  EXPECT_EQ(parse_node_state("drng").base, "draining");
  EXPECT_EQ(parse_node_state("drain").base, "drained");
  EXPECT_EQ(parse_node_state("alloc+").base, "allocated");
}

TEST(SlurmNodeState, ReferenceClassification) {
  for (const char* down : {"drained", "drained*", "down", "down*", "maint", "powered_down", "powering_down",
                           "powering_up", "fail", "future", "inval", "perfctrs"})
    EXPECT_TRUE(parse_node_state(down).is_down()) << down;
  for (const char* up : {"idle", "idle~", "allocated", "mixed", "draining", "completing", "reserved", "planned"})
    EXPECT_FALSE(parse_node_state(up).is_down()) << up;
  EXPECT_FALSE(parse_node_state("failing").is_down()) << "design.md §5: failing is not down";
  for (const char* running : {"allocated", "allocated+", "mixed", "draining", "completing", "failing", "mixed-"})
    EXPECT_TRUE(parse_node_state(running).is_running_jobs()) << running;
  for (const char* idle : {"idle", "drained", "down*", "reserved"})
    EXPECT_FALSE(parse_node_state(idle).is_running_jobs()) << idle;
}

TEST(SlurmNodeState, CountedState) {
  EXPECT_EQ(parse_node_state("allocated+").counted_state(), "allocated") << "design.md §5: the reference crashed";
  EXPECT_EQ(parse_node_state("drained*").counted_state(), "drained");
  EXPECT_EQ(parse_node_state("idle~").counted_state(), "idle");
  EXPECT_EQ(parse_node_state("reboot_requested").counted_state(), "reboot_requested");
  EXPECT_EQ(parse_node_state("weird").counted_state(), "");
  EXPECT_EQ(parse_node_state("idle+drain").counted_state(), "");
}

TEST(SlurmNodeState, Malformed) {
  for (const char* v : {"", "  ", "*", "+", "idle++drain", "+idle", "idle 2", "idle/x", "n/a"})
    EXPECT_THROW(parse_node_state(v), ParseError) << v;
}

TEST(SlurmJobState, Parse) {
  JobState s = parse_job_state("CANCELLED by 123");
  EXPECT_EQ(s.name, "CANCELLED");
  EXPECT_EQ(s.detail, "by 123");
  EXPECT_EQ(s.cancelled_by, 123);
  s = parse_job_state("running");
  EXPECT_EQ(s.name, "RUNNING");
  EXPECT_EQ(s.cancelled_by, std::nullopt);
  EXPECT_EQ(parse_job_state("COMPLETED+").name, "COMPLETED");
  EXPECT_THROW(parse_job_state(""), ParseError);
}

TEST(SlurmJobState, ReferenceSets) {
  EXPECT_TRUE(is_failed_job_state("CANCELLED by 123"));
  EXPECT_TRUE(is_failed_job_state("NODE_FAIL"));
  EXPECT_TRUE(is_failed_job_state("oom"));
  EXPECT_TRUE(is_failed_job_state("TIMEOUT"));
  EXPECT_FALSE(is_failed_job_state("COMPLETED"));
  EXPECT_FALSE(is_failed_job_state("RUNNING"));
  EXPECT_FALSE(is_failed_job_state("REQUEUED"));
  EXPECT_TRUE(is_terminal_job_state("COMPLETED"));
  EXPECT_TRUE(is_terminal_job_state("cd"));
  EXPECT_TRUE(is_terminal_job_state("CANCELLED by 123"));
  EXPECT_TRUE(is_terminal_job_state("requeued"));
  EXPECT_FALSE(is_terminal_job_state("RUNNING"));
  EXPECT_FALSE(is_terminal_job_state("PENDING"));
  for (const char* p : {"PENDING", "pd", "REQUEUED", "rq", "SUSPENDED", "S"}) EXPECT_TRUE(is_pending_job_state(p)) << p;
  EXPECT_FALSE(is_pending_job_state("PENDING by 1")) << "exact match";
  EXPECT_TRUE(is_running_job_state("RUNNING"));
  EXPECT_TRUE(is_running_job_state("R"));
  EXPECT_FALSE(is_running_job_state("RUNNING+"));
  EXPECT_TRUE(is_pending_on_resources("PENDING", "Resources"));
  EXPECT_TRUE(is_pending_on_resources("PENDING", "Priority"));
  EXPECT_FALSE(is_pending_on_resources("PENDING", "DependencyNeverSatisfied"));
  EXPECT_FALSE(is_pending_on_resources("RUNNING", "Priority"));
}

}  // namespace
}  // namespace gcm::slurm
