// libFuzzer: the depth-limited JSON parse (core/json_limits.h) on arbitrary text. Nothing may crash or overflow the
// stack, and the pre-pass must hold its promise: whatever it lets through nests no deeper than the limit. The first
// byte picks a small limit and whether comments are allowed, so that the boundary is reached by short inputs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/json_limits.h"
#include "fuzz_target.h"

namespace {

// The nesting of a parsed value; recursion is safe here because the value passed the depth check.
size_t depth_of(const nlohmann::json& j) {
  if (!j.is_structured()) return 0;
  size_t deepest = 0;
  for (const auto& e : j) deepest = std::max(deepest, depth_of(e));
  return deepest + 1;
}

}  // namespace

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  gcm::JsonLimits limits;
  limits.max_depth = 1 + data[0] % 16;
  limits.ignore_comments = data[0] & 0x80;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string why;
  nlohmann::json j = gcm::parse_json_limited(text, &why, limits);
  if (j.is_discarded()) {
    if (why.empty()) __builtin_trap();  // a refusal always says why
    return 0;
  }
  if (depth_of(j) > limits.max_depth) __builtin_trap();
  (void)j.dump();  // the recursive writer runs on what was accepted
  // The default limit on the same text: a deeper limit never refuses what a shallower one accepted.
  gcm::JsonLimits deflt;
  deflt.ignore_comments = limits.ignore_comments;
  if (gcm::parse_json_limited(text, nullptr, deflt).is_discarded()) __builtin_trap();
  return 0;
}

const bool kJsonLimitsFuzzRegistered = gcm::fuzz::register_target("json_limits_fuzz", fuzz_one);

}  // namespace
