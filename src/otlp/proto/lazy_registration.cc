// Descriptor registration on first use, for every generated .proto file in the program: the OTLP subset compiled
// here and the files inside Debian's libprotobuf.a (descriptor.proto and the well-known types).
//
// protoc (3.21) gives each file a static initialiser, an AddDescriptorsRunner, that adds the file's serialized
// descriptor to the generated pool's database before main(). In a 2-ms health check that never touches protobuf,
// those of libprotobuf.a alone were 0.7 M of the check's 2.5 M instructions and most of the 616 KiB of protobuf's
// code resident at main() (bench/README.md, "Start-up floors"). Registration happens anyway when a file is first used: a message's
// descriptor() or GetMetadata() goes through AssignDescriptors(), which adds the file and its dependencies to the
// database first. Nothing in gcm looks a type up by name before using one of its messages.
//
// The generated code cannot be edited inside an archive, so the link redirects every call of the runner's
// constructor to the function below (`--wrap`, set on gcm_otlp_proto in src/CMakeLists.txt), which only notes the
// file; register_proto_descriptors() runs the real runners later. A constructor's symbol is not a name C++ can
// declare, hence the mangled name (AddDescriptorsRunner(const DescriptorTable*), complete-object constructor): a
// protobuf whose runner changes signature fails the link instead of silently paying the cost again.
#include "otlp/proto/lazy_registration.h"

#include <array>
#include <mutex>

namespace google::protobuf::internal {
struct DescriptorTable;
}

using google::protobuf::internal::DescriptorTable;

extern "C" {
void __real__ZN6google8protobuf8internal20AddDescriptorsRunnerC1EPKNS1_15DescriptorTableE(void* runner,
                                                                                          const DescriptorTable* table);
void __wrap__ZN6google8protobuf8internal20AddDescriptorsRunnerC1EPKNS1_15DescriptorTableE(void* runner,
                                                                                          const DescriptorTable* table);
}

namespace {

// Filled by static initialisers, which run one at a time before main(): no lock, and no allocation before main.
// gcm has 9 OTLP files and libprotobuf.a up to 12; a program with more registers the rest at once.
constinit std::array<const DescriptorTable*, 64> deferred{};
constinit std::size_t deferred_count = 0;

void run_runner(const DescriptorTable* table) {
  char runner = 0;  // AddDescriptorsRunner is an empty object: its constructor only registers the table
  __real__ZN6google8protobuf8internal20AddDescriptorsRunnerC1EPKNS1_15DescriptorTableE(&runner, table);
}

}  // namespace

extern "C" void __wrap__ZN6google8protobuf8internal20AddDescriptorsRunnerC1EPKNS1_15DescriptorTableE(
    void* /*runner*/, const DescriptorTable* table) {
  if (deferred_count < deferred.size())
    deferred[deferred_count++] = table;
  else
    run_runner(table);
}

namespace gcm::otlp {

void register_proto_descriptors() {
  static std::once_flag once;
  // A file already registered on first use is skipped by protobuf itself (its table is marked initialised).
  std::call_once(once, [] {
    for (std::size_t i = 0; i < deferred_count; ++i) run_runner(deferred[i]);
  });
}

std::size_t deferred_proto_files() { return deferred_count; }

}  // namespace gcm::otlp
