// `gcm agent status`: the agent's current view for a person at a terminal (a table per GPU, then the node's
// checks and problems), from its state file.
#pragma once

#include <cstdint>
#include <string>

#include "agent/agent_state.h"

namespace gcm::agent {

std::string status_text(const AgentState& s, int64_t now_unix_ms);

}  // namespace gcm::agent
