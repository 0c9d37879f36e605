// libFuzzer: JSON string encoding of arbitrary bytes is always valid UTF-8 JSON, and the computed compact size
// equals the encoded length.
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "core/json.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  std::string s(reinterpret_cast<const char*>(data), size);
  gcm::Schema schema;
  schema.name = "F";
  schema.fields = {{"s"}};
  gcm::Record r(schema);
  r[0] = s;
  std::string compact = gcm::to_json(r, false, gcm::JsonStyle::Compact);
  std::string python = gcm::to_json(r, false, gcm::JsonStyle::Python);
  if (gcm::compact_json_size(r) != compact.size()) std::abort();
  auto a = nlohmann::json::parse(compact);  // throws (and so crashes the fuzzer) on invalid JSON or UTF-8
  auto b = nlohmann::json::parse(python);
  if (a != b) std::abort();
  for (unsigned char c : python) {
    if (c >= 0x80) std::abort();  // the Python form is pure ASCII
  }
  return 0;
}

const bool kJsonStringFuzzRegistered = gcm::fuzz::register_target("json_string_fuzz", fuzz_one);

}  // namespace
