// health_checks check-nccl: runs nccl-tests (<op>_perf) through mpirun on single hosts or pairs of hosts and judges
// the "Avg bus bandwidth" each run reports against the thresholds.
#include <fmt/format.h>

#include "cli/option_binder.h"
#include "health/check.h"
#include "health/nccl_plan.h"
#include "health/tool_run.h"
#include "slurm/hostlist.h"

namespace gcm::health {
namespace {

class CheckNccl : public HealthCheck {
 public:
  explicit CheckNccl(OptionBinder& b) {
    auto* single = b.flag("--single", "single", single_, "Each host alone (the default mode).");
    auto* pairwise =
        b.flag("--pairwise,--pairwise-exhaustive", "pairwise", pairwise_, "Every pair of hosts of --hostlist.");
    auto* quick = b.flag("--pairwise-quick", "pairwise_quick", pairwise_quick_,
                         "Pairs (h0,h1), (h2,h3), ... and (last, first) when the count is odd.");
    single->excludes(pairwise)->excludes(quick);
    pairwise->excludes(quick);
    b.option("-n,--np", "np", np_, "mpirun --np (default: gpus-per-node x hosts in the group).");
    b.option("--gpus-per-node", "gpus_per_node", gpus_per_node_, "GPUs (ranks) per host.")->capture_default_str();
    b.flag("--nvlink,!--no-nvlink", "nvlink", nvlink_,
           "Let NCCL use NVLink/shared memory (default --no-nvlink: NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1).");
    b.option("--mpi-binpath", "mpi_binpath", mpirun_, "The mpirun executable.")->capture_default_str();
    b.option("--hostlist", "hostlist", hostlist_,
             "Slurm hostlist of the hosts to test (default: this host; required for pairwise modes).");
    b.option("--mpi-opts", "mpi_opts", mpi_opts_, "Options for mpirun (split into words).")->capture_default_str();
    b.option("-x,--export", "export", exports_,
             "Environment passed with mpirun -x; repeat for several (replaces "
             "the defaults).")
        ->capture_default_str();
    b.option("--nccl-tdir", "nccl_tdir", tests_dir_, "The directory of the nccl-tests binaries (required).");
    b.option("--nccl-topts", "nccl_topts", test_opts_, "Options for the nccl-tests binary (split into words).")
        ->capture_default_str();
    b.option("-p,--op", "op", ops_, "all_gather, all_reduce or alltoall (required; repeat for several).")
        ->check(CLI::IsMember({"all_gather", "all_reduce", "alltoall"}));
    b.option("--critical-threshold", "critical_threshold", critical_,
             "Avg bus bandwidth (GB/s) below which the result is CRITICAL (required).");
    b.option("--warn-threshold", "warn_threshold", warn_, "Avg bus bandwidth (GB/s) below which it is WARNING.");
  }

  int run(CheckRun& r) override {
    return r.run_standard("nccl-tests", "disable_nccl_tests", [&]() -> CheckOutcome { return evaluate(r); });
  }

 private:
  CheckOutcome evaluate(CheckRun& r) {
    // Required options are checked here, not by the parser: they may come from the config file.
    if (!tests_dir_) throw CheckUsageError("Missing option '--nccl-tdir'.");
    if (ops_.empty()) throw CheckUsageError("Missing option '-p' / '--op'.");
    if (!critical_) throw CheckUsageError("Missing option '--critical-threshold'.");
    NcclMode mode = pairwise_ ? NcclMode::Pairwise : pairwise_quick_ ? NcclMode::PairwiseQuick : NcclMode::Single;
    std::vector<std::string> hosts;
    if (hostlist_) {
      try {
        hosts = slurm::expand_hostlist(*hostlist_);
      } catch (const std::exception& e) {
        throw CheckUsageError(fmt::format("Invalid value for '--hostlist': {}", e.what()));
      }
    } else if (mode != NcclMode::Single) {
      throw CheckUsageError("Host list required for pairwise NCCL testing");
    } else {
      hosts = {node_hostname()};
    }
    std::vector<std::vector<std::string>> groups;
    try {
      groups = nccl_host_groups(hosts, mode);
    } catch (const std::invalid_argument& e) {
      throw CheckUsageError(e.what());
    }
    NcclCommand cmd;
    cmd.mpirun = mpirun_;
    cmd.gpus_per_node = gpus_per_node_;
    cmd.np = np_;
    cmd.mpi_opts = split_words(mpi_opts_);
    cmd.exports = exports_;
    cmd.nvlink = nvlink_;
    cmd.tests_dir = *tests_dir_;
    cmd.test_opts = split_words(test_opts_);
    ExitCode code = ExitCode::OK;
    std::vector<std::string> lines;
    for (const auto& op : ops_) {
      cmd.op = op;
      for (const auto& group : groups) {
        std::vector<std::string> argv = nccl_argv(cmd, group);
        if (r.log) r.log->info("nccl-tests: {}", command_line(argv));
        CommandResult res = run_tool(argv, static_cast<double>(r.timeout_s));
        if (r.log && !res.out.empty()) r.log->info("nccl-tests output:\n{}", res.out);
        std::string where = fmt::format("{} on {}", op, fmt::join(group, ","));
        if (res.exit_code > 0) {
          code = worse(code, ExitCode::WARN);
          lines.push_back(fmt::format("{}: nccl-tests FAILED to execute. error_code: {} output: {}", where,
                                      res.exit_code, res.out.substr(0, 500)));
          continue;
        }
        auto bw = nccl_avg_bus_bandwidth(res.out);
        if (!bw) {
          code = worse(code, ExitCode::WARN);
          lines.push_back(fmt::format("{}: no \"Avg bus bandwidth\" in the nccl-tests output.", where));
        } else if (*bw < *critical_) {
          code = worse(code, ExitCode::CRITICAL);
          lines.push_back(
              fmt::format("{}: Avg bus bandwidth {} GB/s is below the critical threshold {}.", where, *bw, *critical_));
        } else if (warn_ && *bw < *warn_) {
          code = worse(code, ExitCode::WARN);
          lines.push_back(
              fmt::format("{}: Avg bus bandwidth {} GB/s is below the warning threshold {}.", where, *bw, *warn_));
        } else {
          lines.push_back(fmt::format("{}: Avg bus bandwidth {} GB/s.", where, *bw));
        }
      }
    }
    return {code, fmt::format("{}", fmt::join(lines, "\n"))};
  }

  bool single_ = false, pairwise_ = false, pairwise_quick_ = false;
  std::optional<int> np_;
  int gpus_per_node_ = 8;
  bool nvlink_ = false;
  std::string mpirun_ = "mpirun";
  std::optional<std::string> hostlist_;
  std::string mpi_opts_ = "-mca coll_hcoll_enable 0 --bind-to numa";
  std::vector<std::string> exports_ = {"NCCL_IB_PCI_RELAXED_ORDERING=1", "CUDA_DEVICE_ORDER=PCI_BUS_ID",
                                       "NCCL_SOCKET_IFNAME=eth0", "NCCL_DEBUG=WARN"};
  std::optional<std::string> tests_dir_;
  std::string test_opts_ = "-g 1 -b 32M -e 1G -f 2";
  std::vector<std::string> ops_;
  std::optional<double> critical_, warn_;
};

const bool kCheckNcclRegistered = register_health_check({
    {"check-nccl"},
    "NCCL bandwidth: nccl-tests through mpirun on single hosts or host pairs, judged by Avg bus bandwidth.",
    true,
    [](OptionBinder& b) -> std::unique_ptr<HealthCheck> { return std::make_unique<CheckNccl>(b); },
});

}  // namespace
}  // namespace gcm::health
