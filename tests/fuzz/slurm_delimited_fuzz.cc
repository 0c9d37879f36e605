// libFuzzer: the delimited-row parser and the sacct line repair never crash; rows always have the header's field
// count under the strict policy, and errors are DelimitedError only. The first byte picks the options.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "slurm/delimited.h"
#include "slurm/sacct_lines.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  using namespace gcm::slurm;
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  static const char* const kDelimiters[] = {"|", "|#", "", ","};
  DelimitedOptions o;
  o.delimiter = kDelimiters[mode & 3];
  o.length_mismatch = static_cast<RowLengthPolicy>((mode >> 2) % 4);
  o.trailing_delimiter = mode & 16;
  o.trim_values = mode & 32;
  o.trim_line = mode & 64;
  if (mode & 128) {
    o.header = false;
    o.columns = {"A", "B", "C"};
  }
  try {
    DelimitedParser parser(o);
    SacctLineRepair repair(o.delimiter);
    for_each_line(text, [&](std::string_view line) {
      auto logical = repair.feed(line);
      if (!logical) return;
      if (const DelimitedRow* row = parser.feed(*logical)) {
        bool exact = o.length_mismatch == RowLengthPolicy::Error || o.length_mismatch == RowLengthPolicy::Skip ||
                     o.length_mismatch == RowLengthPolicy::DropExtraSkipShort;
        if (exact && row->fields.size() != parser.header().size()) std::abort();
        if (row->fields.size() > parser.header().size()) std::abort();
      }
    });
  } catch (const DelimitedError& e) {
    if (e.line() == 0) std::abort();
  }
  return 0;
}

const bool kSlurmDelimitedFuzzRegistered = gcm::fuzz::register_target("slurm_delimited_fuzz", fuzz_one);

}  // namespace
