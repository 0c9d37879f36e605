// The fuzz targets are one libFuzzer program (gcm_fuzzers): each *_fuzz.cc registers its entry point under its file
// name, and the program runs the target its argv[0] names (build/fuzz/<name> is a link to it). One program instead
// of one per target: linking the whole library under the sanitizers once, not 23 times, was a third of the sanitizer
// build of `make test`.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gcm::fuzz {

using Target = int (*)(const uint8_t* data, size_t size);

// Registers a target under `name` ("csv_record_fuzz"); from a static initialiser at the bottom of its file.
bool register_target(const char* name, Target target);

}  // namespace gcm::fuzz
