// libFuzzer: a CSV header read back from a file (sinks/csv_table.h) never crashes the parser, and whatever parses
// cleanly is written back by csv_record() to text that parses to the same fields (the header a CSV sink compares
// its columns with must survive its own round trip, or every batch would start a new file).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sinks/csv_table.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  std::string line(reinterpret_cast<const char*>(data), size);
  bool ok = false;
  auto fields = gcm::parse_csv_record(line, ok);
  if (!ok) return 0;
  std::string written = gcm::csv_record(fields);
  written.resize(written.size() - 2);  // "\r\n"
  bool again_ok = false;
  if (gcm::parse_csv_record(written, again_ok) != fields || !again_ok) std::abort();
  return 0;
}

const bool kCsvRecordFuzzRegistered = gcm::fuzz::register_target("csv_record_fuzz", fuzz_one);

}  // namespace
