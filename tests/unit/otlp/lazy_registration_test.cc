#include "otlp/proto/lazy_registration.h"

#include "otlp/transport.h"

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace gcm {
namespace {

bool in_pool(const char* file) {
  return google::protobuf::DescriptorPool::generated_pool()->FindFileByName(file) != nullptr;
}

// The "threadsafe" death-test style for one test: the statement runs in the test binary started again for it alone.
struct FreshProcessDeathTests {
  std::string before = GTEST_FLAG_GET(death_test_style);
  FreshProcessDeathTests() { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  ~FreshProcessDeathTests() { GTEST_FLAG_SET(death_test_style, before); }
};

// Looking a file up by name does not register it, so the pool shows what was registered (descriptor.proto always
// is: generated_pool() uses it). The statement runs in a fresh process (the "threadsafe" style runs the test binary
// again for it alone), where nothing has used protobuf.
TEST(OtlpLazyRegistration, FilesAreRegisteredOnlyWhenAskedFor) {
  FreshProcessDeathTests fresh;
  EXPECT_EXIT(
      {
        bool none_before = !in_pool("metrics.proto") && !in_pool("logs_service.proto");
        // The OTLP subset's nine files were deferred (and, where libprotobuf is linked from its archive, its own).
        bool deferred = otlp::deferred_proto_files() >= 9;
        otlp::register_proto_descriptors();
        bool all_after = in_pool("metrics.proto") && in_pool("logs_service.proto") && in_pool("trace_service.proto");
        otlp::register_proto_descriptors();  // a second call changes nothing
        std::exit((none_before ? 0 : 1) | (deferred ? 0 : 2) | (all_after ? 0 : 4));
      },
      ::testing::ExitedWithCode(0), "");
}

// Sinks, the agent's push and slurm_processor's forwarding send from threads of their own: a transport registers
// every file before any of them can use protobuf, so no registration on first use races a lookup on another thread.
TEST(OtlpLazyRegistration, ATransportRegistersEveryFileWhenItIsMade) {
  FreshProcessDeathTests fresh;
  EXPECT_EXIT(
      {
        bool none_before = !in_pool("metrics.proto") && !in_pool("logs_service.proto");
        auto cfg = std::make_shared<otlp::TransportConfig>();
        cfg->metrics_url = "http://127.0.0.1:1/v1/metrics";
        otlp::Transport transport(cfg);
        bool all_after = in_pool("metrics.proto") && in_pool("logs_service.proto") && in_pool("trace_service.proto");
        std::exit((none_before ? 0 : 1) | (all_after ? 0 : 4));
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace gcm
