// What check-blockdev reads from `smartctl -xj /dev/<disk>`: identity, capacity, the NVMe health log and SMART's
// overall self-assessment. smartctl's exit status is a bit mask that is non-zero for many healthy-but-noteworthy
// disks, so the JSON document, not the status, is what counts.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gcm::health {

struct SmartctlError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct NvmeHealthLog {
  long long data_units_read = 0, data_units_written = 0, host_reads = 0, host_writes = 0;
  long long percentage_used = 0, available_spare = 0, available_spare_threshold = 0;
};

struct SmartInfo {
  std::string model_name, serial_number;
  std::optional<long long> capacity;        // bytes: nvme_total_capacity, else user_capacity.bytes
  std::optional<NvmeHealthLog> health_log;  // absent when smartctl could not read it
  std::optional<bool> smart_passed;         // smart_status.passed
  long long read_kbytes() const { return health_log ? health_log->data_units_read * 512 : 0; }
  long long written_kbytes() const { return health_log ? health_log->data_units_written * 512 : 0; }
};

// Throws SmartctlError naming the source for text that is not a JSON object or a field of the wrong type. A health
// log missing one of its fields counts as absent.
SmartInfo parse_smartctl_json(std::string_view text, const std::string& source);

}  // namespace gcm::health
