// libFuzzer: TZif data and POSIX TZ rules from arbitrary bytes load or throw TimeZoneError; a loaded zone answers
// offsets and wall-clock conversions without crashing.
#include <cstdint>
#include <string_view>

#include "core/time_zone.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (bool as_rule : {false, true}) {
    try {
      gcm::TimeZone z = as_rule ? gcm::TimeZone::from_posix_rule(bytes) : gcm::TimeZone::from_tzif("fuzz", bytes);
      for (int64_t t : {int64_t{-2208988800}, int64_t{0}, int64_t{1710064800}, int64_t{4118083200}}) {
        (void)z.to_unix(t + z.offset_at(t));
      }
    } catch (const gcm::TimeZoneError&) {
    }
  }
  return 0;
}

const bool kTimeZoneFuzzRegistered = gcm::fuzz::register_target("time_zone_fuzz", fuzz_one);

}  // namespace
