// health_checks check-telemetry: sends one HealthCheckLog record with the given verdict (for results produced
// elsewhere, e.g. a site script), and always exits 0.
#include "cli/option_binder.h"
#include "health/check.h"

namespace gcm::health {
namespace {

class CheckTelemetry : public HealthCheck {
 public:
  explicit CheckTelemetry(OptionBinder& b) {
    b.option("--exit_code,--exit-code", "exit_code", exit_code_,
             "The verdict to record: 0 OK, 1 WARNING, "
             "2 CRITICAL, 3 UNKNOWN.")
        ->required()
        ->check(CLI::Range(0, 3));
    b.option("--health-check-name", "health_check_name", name_, "The health_check field, e.g. \"check zombie\".")
        ->required();
    b.option("--node", "node", node_, "The node field.")->required();
    b.option("--msg", "msg", msg_, "The message.");
    b.option("--job-id", "job_id", job_id_, "The job_id field.")->capture_default_str();
  }

  // Not a check, so not run_standard: it prints nothing, has no killswitch and exits 0 whatever the verdict it
  // relays (with the node and job id it is given); only the record is the framework's.
  int run(CheckRun& r) override {
    CheckOutcome o{*exit_code_from_int(exit_code_), msg_};
    r.send_telemetry(name_, o, CheckRun::now(), job_id_, node_);
    return 0;
  }

 private:
  int exit_code_ = 0;
  std::string name_, node_, msg_;
  int64_t job_id_ = 0;
};

const bool kCheckTelemetryRegistered = register_health_check({
    {"check-telemetry"},
    "Send one telemetry record with a given verdict (no check is run); always exits 0.",
    false,
    [](OptionBinder& b) -> std::unique_ptr<HealthCheck> { return std::make_unique<CheckTelemetry>(b); },
});

}  // namespace
}  // namespace gcm::health
