#pragma once
// Descriptor registration on first use (lazy_registration.cc says why), and the one call that registers them all
// before threads share protobuf.

#include <cstddef>

namespace gcm::otlp {

// Adds every generated .proto file of the program to protobuf's generated pool, as the static initialisers that
// protoc writes would have before main(). A file is registered on its first use anyway, but that registration is
// not safe against another thread looking a type up at the same moment (it writes the pool's database outside the
// pool's lock), so a program calls this once before its threads share protobuf. Idempotent and thread-safe.
void register_proto_descriptors();

// How many generated files' registrations were deferred at start-up (for tests).
std::size_t deferred_proto_files();

}  // namespace gcm::otlp
