#include "collectors/slurm_query_collector.h"
#include "core/clock.h"

#include <ctime>
#include <memory>

#include "collectors/slurm_backend.h"
#include "collectors/slurm_timeout_option.h"
#include "core/schema.h"

namespace gcm::scheduler {

namespace {

class SlurmQueryCollector : public Collector {
 public:
  SlurmQueryCollector(std::shared_ptr<const SlurmQueryCollectorSpec> spec, OptionBinder& b) : spec_(std::move(spec)) {
    add_slurm_timeout_option(b, timeout_s_, spec_->timeout_help);
    if (spec_->takes_rest_backend) add_slurm_backend_options(b, backend_);
  }
  std::vector<CollectorTask> tasks(const CollectorContext& context) override {
    slurm_.configure(backend_, slurm_timeout_ms(timeout_s_));
    if (slurm_.rest())
      context.log->info("{}: from slurmrestd at {} where its API version has an endpoint for it, else its command",
                        spec_->name, backend_.rest_url);
    return {{spec_->name, &spec_->schema->get(), [this](const CollectorContext& ctx, RecordOut& out) {
               Params p{ctx.cluster, ctx.heterogeneous_cluster_v1, unix_time_now(),
                        slurm_timeout_ms(timeout_s_)};
               spec_->collect(slurm_.client(), p, out);
             }}};
  }

 private:
  std::shared_ptr<const SlurmQueryCollectorSpec> spec_;
  double timeout_s_ = 60;
  SlurmBackendOptions backend_;  // "cli" unless the spec takes the options and they say otherwise
  SlurmBackend slurm_;
};

}  // namespace

bool register_slurm_query_collector(SlurmQueryCollectorSpec spec) {
  auto owned = std::make_shared<const SlurmQueryCollectorSpec>(std::move(spec));
  const bool collector = register_collector({
      owned->name,
      owned->summary,
      owned->help,
      owned->default_interval,
      owned->name,
      [owned](OptionBinder& b) -> std::unique_ptr<Collector> {
        return std::make_unique<SlurmQueryCollector>(owned, b);
      },
  });
  const bool schema = register_schema(owned->schema);
  return collector && schema;
}

}  // namespace gcm::scheduler
