// libFuzzer: the sacct line reader (sacct_publish's SacctPublisher: line splitting across reads, UTF-8 modes,
// header, field counts, times) and the multi-line repair with fsacct's End filter never crash; a record always has
// the header's columns, and the only errors are PublishError (with a line number) and the repair's DelimitedError.
// The first byte picks the options.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/time_zone.h"
#include "sacct/fsacct.h"
#include "sacct/publish.h"
#include "sacct/sacct_records.h"
#include "slurm/delimited.h"
#include "fuzz_target.h"

namespace {

struct CheckingOut : gcm::RecordOut {
  size_t columns = 0;
  void emit(const gcm::Record& r) override {
    const gcm::Value& sacct = r[gcm::sacct::kPayloadSacct];
    if (!sacct.is_object() || sacct.as_object().empty() || sacct.as_object().size() > columns) std::abort();
    if (!r[gcm::sacct::kPayloadEndDs].is_string() || r[gcm::sacct::kPayloadEndDs].as_string().size() < 10) std::abort();
  }
};

}  // namespace

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  using namespace gcm::sacct;
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  static const char* const kDelimiters[] = {"|", "|#", ",", "ab"};
  static const gcm::TimeZone utc = gcm::TimeZone::from_posix_rule("UTC0");
  static const gcm::TimeZone pacific = gcm::TimeZone::from_posix_rule("PST8PDT,M3.2.0,M11.1.0");

  PublishOptions o;
  o.delimiter = kDelimiters[mode & 3];
  o.ignore_line_errors = mode & 4;
  o.io_errors = static_cast<Utf8Errors>((mode >> 3) % 3);
  o.naive_zone = (mode & 32) ? pacific : utc;
  o.sacct_zone = utc;
  o.end_ds_zone = pacific;
  o.heterogeneous_cluster_v1 = mode & 64;
  o.cluster = "c";
  // Through a pipe, so run()'s buffering is exercised too (inputs are small enough for the pipe buffer).
  int fds[2];
  if (::pipe(fds) != 0) return 0;
  if (text.size() < 60000) {
    if (::write(fds[1], text.data(), text.size()) != static_cast<ssize_t>(text.size())) std::abort();
  }
  ::close(fds[1]);
  CheckingOut out;
  try {
    SacctPublisher p(o, nullptr);
    // The header's column count bounds the object (repeated names share a key).
    std::string_view first = text.substr(0, text.find('\n'));
    out.columns = 1;
    for (size_t at = first.find(o.delimiter); at != std::string_view::npos;
         at = first.find(o.delimiter, at + o.delimiter.size()))
      ++out.columns;
    p.run(fds[0], out);
    if (p.stats().records > p.stats().lines) std::abort();
  } catch (const PublishError& e) {
    if (e.line() == 0) std::abort();
  }
  ::close(fds[0]);

  FsacctWindow w{(mode & 128) ? std::optional<int64_t>(1617778800) : std::nullopt, std::optional<int64_t>(1617865199)};
  try {
    size_t lines = 0;
    FsacctFilter f(o.delimiter, true, w, pacific, 1 + (mode & 7), [&](std::string_view) { ++lines; });
    gcm::slurm::for_each_line(text, [&](std::string_view l) { f.feed(l); });
    f.finish();
    if (f.rows_out() > f.rows_in()) std::abort();
  } catch (const gcm::slurm::DelimitedError& e) {
    if (e.line() == 0) std::abort();
  }
  return 0;
}

const bool kSacctReaderFuzzRegistered = gcm::fuzz::register_target("sacct_reader_fuzz", fuzz_one);

}  // namespace
