// The attributes the enrichment puts, encoded once per request for each set of values (a GPU's job fields, a
// host's lists, a host's job ids) and then copied into every item that gets them: a data point's nine job
// attributes are one memcpy.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "processor/node_jobs.h"
#include "processor/wire_attributes.h"

namespace gcm::processor::wire {

struct EncodedPuts {
  std::string bytes;                                        // the attribute fields, side by side, in put order
  std::array<Put, kJobKeys.size() + kPodKeys.size()> puts;  // views into bytes
  size_t count = 0;
  uint16_t key_bits = 0;  // ItemScan::added_keys bits of the keys put
};

// Keyed by the address of the source, which the caller keeps alive for as long as this object.
class JobPuts {
 public:
  // A GPU's: the nine job keys as strings when it has a job, and the pod keys the kubelet named when it has a pod;
  // at least one of the two is given.
  const EncodedPuts& strings(const JobFields* fields, const PodValues* pod, uint32_t attr_no);
  const EncodedPuts& lists(const NodeJobs& jobs, uint32_t attr_no);    // the nine job keys as lists
  const EncodedPuts& job_ids(const NodeJobs& jobs, uint32_t attr_no);  // the resource's job_id

 private:
  enum class Kind : uint8_t { Strings, Lists, JobIds };
  struct Entry {
    const void* source;
    const void* pod;  // Strings only: the PodValues, or null
    Kind kind;
    uint32_t attr_no;
    EncodedPuts puts;
  };
  template <typename Encode>
  const EncodedPuts& find_or_encode(const void* source, const void* pod, Kind kind, uint32_t attr_no, Encode encode);

  std::vector<std::unique_ptr<Entry>> entries_;  // a handful per request: a linear search is the fastest lookup
};

}  // namespace gcm::processor::wire
