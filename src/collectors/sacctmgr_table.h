// Shared by sacctmgr_qos and sacctmgr_user: a `sacctmgr ... -P` table as {column: value} objects, where a row of the
// wrong length is logged with its line, skipped, and reported once the output is read.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <spdlog/logger.h>

#include "core/value.h"
#include "slurm/client.h"

namespace gcm::sacctmgr {

struct TableProblems {
  size_t count = 0;
  std::optional<slurm::SlurmError> first;
  // Throws the first problem (with the count of the others), if any.
  void raise() const;
};

using TableRowHandler = std::function<void(const Object& row)>;

// Streams the rows of query (header first, '|'-delimited) as objects keyed by rename(header name) (the name itself
// when rename is empty). Returns the number of rows delivered.
size_t stream_table(slurm::SlurmClient& slurm, const slurm::SlurmQuery& query,
                    const std::function<std::string(std::string_view)>& rename, const TableRowHandler& on_row,
                    TableProblems& problems, spdlog::logger* log);

}  // namespace gcm::sacctmgr
