// The agent's attribution is asked again only when something says a job changed: a GPU's processes, a file of the
// mapping directory, or the refresh period.
#include "agent/job_attribution.h"

#include <fstream>

#include <gtest/gtest.h>

#include "core/logging.h"
#include "temp_dir.h"

namespace gcm::agent {
namespace {

std::vector<DeviceResult> gpus_with_pids(std::vector<std::vector<unsigned>> pids) {
  std::vector<DeviceResult> out;
  for (unsigned i = 0; i < pids.size(); ++i) {
    DeviceResult r;
    r.index = i;
    r.sample.processes.emplace();
    for (unsigned pid : pids[i]) {
      GpuProcess p;
      p.pid = pid;
      r.sample.processes->push_back(p);
    }
    out.push_back(std::move(r));
  }
  return out;
}

AgentOptions mapping_options(const std::string& dir) {
  AgentOptions o;
  o.attribution = {"mapping-files"};
  o.gpu_job_mapping_dir = dir;
  o.attribution_refresh_s = 3600;
  return o;
}

TEST(JobAttribution, AMappingFileNamesTheJobAndIsReadAgainOnlyWhenSomethingChanged) {
  gcm::testing::TempDir dir;
  std::ofstream(dir.file("1")) << "4242\n";
  AgentOptions opts = mapping_options(dir.path());
  JobAttribution a(stderr_logger("job-attribution-test"));
  a.reset(dir.path());
  SourceStats source;
  auto results = gpus_with_pids({{}, {}});
  EXPECT_TRUE(a.maybe_attribute(results, opts, source));
  EXPECT_TRUE(source.up);
  EXPECT_EQ(a.job_of(0), "");
  EXPECT_EQ(a.job_of(1), "4242");
  // Nothing changed: the last attribution stands.
  EXPECT_FALSE(a.maybe_attribute(results, opts, source));
  // A prolog writes GPU 0's file: the directory's change is seen.
  std::ofstream(dir.file("0")) << "77\n";
  EXPECT_TRUE(a.maybe_attribute(results, opts, source));
  EXPECT_EQ(a.job_of(0), "77");
  // A GPU's processes changed.
  EXPECT_FALSE(a.maybe_attribute(results, opts, source));
  EXPECT_TRUE(a.maybe_attribute(gpus_with_pids({{}, {123}}), opts, source));
  // reset() (a reload) attributes at the next sample.
  a.reset(dir.path());
  EXPECT_TRUE(a.maybe_attribute(gpus_with_pids({{}, {123}}), opts, source));
  EXPECT_FALSE(a.any_pod());
}

TEST(JobAttribution, TheAttributionOptionsComeFromTheAgentsAndTheSlurmdNodeName) {
  AgentOptions opts;
  opts.path_procfs = "/host/proc";
  opts.path_sysfs = "/host/sys";
  ::setenv("SLURMD_NODENAME", "gpu017", 1);
  AttributionOptions ao = attribution_options(opts);
  EXPECT_EQ(ao.procfs, "/host/proc");
  EXPECT_EQ(ao.cgroupfs, "/host/sys/fs/cgroup");
  EXPECT_EQ(ao.slurm_node, "gpu017");
  opts.slurm_node = "gpu001";
  EXPECT_EQ(attribution_options(opts).slurm_node, "gpu001");
  ::unsetenv("SLURMD_NODENAME");
}

}  // namespace
}  // namespace gcm::agent
