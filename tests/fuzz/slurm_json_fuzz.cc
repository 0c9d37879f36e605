// libFuzzer: Slurm's JSON as sinfo --json and slurmrestd print it (node records and rows, jobs, partitions, QOS, users,
// associations) never crashes the readers that turn it into the CLI's lines; bad input is a ParseError naming where
// it is.
#include <cstdint>
#include <string_view>

#include "core/time_zone.h"
#include "slurm/rest_render.h"
#include "slurm/rest_render_sacctmgr.h"
#include "slurm/sinfo_json.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  using namespace gcm::slurm;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const gcm::TimeZone utc;
  auto tolerate = [](auto&& f) {
    try {
      f();
    } catch (const ParseError&) {
    }
  };
  tolerate([&] { (void)parse_sinfo_json(text); });
  tolerate([&] { (void)render_sinfo_nodes(text); });
  tolerate([&] { (void)render_squeue_jobs(text, 1796189123, utc); });
  tolerate([&] { (void)render_scontrol_partitions(text); });
  tolerate([&] { (void)render_sacctmgr_qos(text); });
  tolerate([&] { (void)render_sacctmgr_users(text); });
  tolerate([&] { (void)render_sacctmgr_user_assoc(text, "alice"); });
  return 0;
}

const bool kSlurmJsonFuzzRegistered = gcm::fuzz::register_target("slurm_json_fuzz", fuzz_one);

}  // namespace
