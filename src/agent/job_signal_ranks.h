// The job-signal ranks of a window as the agent state file keeps them (`gcm agent status` shows them).
#pragma once

#include <vector>

#include "agent/agent_state.h"
#include "jobsignal/rank_slow.h"

namespace gcm::agent {

// One entry per judged rank, by job and rank.
std::vector<RankStateEntry> rank_state_entries(const std::vector<jobsignal::RankJudgement>& judgements);

}  // namespace gcm::agent
