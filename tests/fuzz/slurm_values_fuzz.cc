// libFuzzer: every Slurm value parser either returns or throws ParseError, on any text.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "slurm/coerce.h"
#include "slurm/duration.h"
#include "slurm/gres.h"
#include "slurm/job_state.h"
#include "slurm/memory.h"
#include "slurm/node_state.h"
#include "slurm/timestamp.h"
#include "slurm/tres.h"
#include "fuzz_target.h"

namespace {

template <typename F>
void tolerate_parse_errors(F&& f) {
  try {
    f();
  } catch (const gcm::slurm::ParseError&) {
  }
}

const gcm::TimeZone& zone() {
  static const gcm::TimeZone z = [] {
    try {
      return gcm::TimeZone::load("America/Los_Angeles");
    } catch (const gcm::TimeZoneError&) {
      return gcm::TimeZone();
    }
  }();
  return z;
}

}  // namespace

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  using namespace gcm::slurm;
  std::string_view s(reinterpret_cast<const char*>(data), size);
  (void)is_null_like(s);
  (void)maybe_int(s);
  (void)maybe_float(s);
  (void)parse_job_ids(s);
  (void)gres_or_tres_gpu_count(s);
  (void)shelper_gres_indices(s);
  tolerate_parse_errors([&] { (void)non_negative_int(s); });
  tolerate_parse_errors([&] { (void)parse_scontrol_maxnodes(s); });
  tolerate_parse_errors([&] { (void)parse_cpu_states(s); });
  tolerate_parse_errors([&] { (void)parse_abbreviated_float(s); });
  tolerate_parse_errors([&] { (void)convert_memory_to_mb(s); });
  tolerate_parse_errors([&] {
    for (const TresEntry& e : parse_tres_entries(s)) tolerate_parse_errors([&] { (void)tres_entry_number(e); });
  });
  tolerate_parse_errors([&] { (void)tres_value(s, "mem"); });
  tolerate_parse_errors([&] {
    auto list = parse_gres_list(s);
    if (gres_indices(list).size() > size * 65537) std::abort();
    (void)gres_count(list);
  });
  tolerate_parse_errors([&] { (void)gres_gpu_count(s); });
  tolerate_parse_errors([&] { (void)tres_per_node_gpu_count(s); });
  tolerate_parse_errors([&] { (void)gpus_in_gres_list(s); });
  tolerate_parse_errors([&] { (void)parse_duration(s); });
  tolerate_parse_errors([&] { (void)elapsed_string_to_seconds(s); });
  tolerate_parse_errors([&] {
    NodeState st = parse_node_state(s);
    if (st.base.empty()) std::abort();
    (void)st.is_down();
    (void)st.counted_state();
  });
  tolerate_parse_errors([&] { (void)parse_job_state(s); });
  (void)is_failed_job_state(s);
  (void)is_terminal_job_state(s);
  tolerate_parse_errors([&] {
    Timestamp t = parse_timestamp(s, zone());
    // What is written must read back as the same instant.
    if (parse_timestamp(format_iso(t), zone()) != t) std::abort();
  });
  tolerate_parse_errors([&] { (void)time_to_time_aware(s, zone(), zone()); });
  return 0;
}

const bool kSlurmValuesFuzzRegistered = gcm::fuzz::register_target("slurm_values_fuzz", fuzz_one);

}  // namespace
