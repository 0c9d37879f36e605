// sacct_publish's reader (gcm-reference.md §1.14): sacct parsable output (a file or stdin) in, one SacctPayload
// record per data line out. Streams: one read buffer and one reused record, whatever the input size.
//
// Line rules: line 1 is the header (stripped, split on the delimiter). Every other line is stripped and split; a
// line whose field count differs from the header's, or whose End is not a date, is invalid: an error naming the
// line, or with ignore_line_errors skipped, counted and reported by number. Invalid UTF-8: strict (an error naming
// the line and the byte offset), ignore (invalid bytes dropped) or replace (each invalid byte becomes U+FFFD).
#pragma once

#include <cstdint>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/logger.h>

#include "collectors/collector.h"
#include "core/record.h"
#include "core/time_zone.h"
#include "sinks/sink.h"

namespace gcm::sacct {

enum class Utf8Errors { Strict, Ignore, Replace };
// "strict", "ignore", "replace"; throws std::invalid_argument naming the value otherwise.
Utf8Errors parse_utf8_errors(std::string_view text);

struct PublishOptions {
  std::string delimiter = "|#";
  bool ignore_line_errors = false;
  Utf8Errors io_errors = Utf8Errors::Strict;
  TimeZone sacct_zone;   // Eligible/Start/Submit/End are written with this zone's offset (--sacct-timezone)
  TimeZone naive_zone;   // naive sacct times are read in it (the host's zone, as the reference does)
  TimeZone end_ds_zone;  // end_ds is End's date here (America/Los_Angeles)
  std::string cluster;
  bool heterogeneous_cluster_v1 = false;
  int64_t time = 0;              // the payloads' time field
  std::string input_name = "-";  // for messages
  // --resolve-kubernetes-hosts: Slurm node (its slurmd pod's name) -> the Kubernetes node the pod runs on. Null:
  // sc_host and sc_node_hosts stay null.
  std::shared_ptr<const std::map<std::string, std::string, std::less<>>> kubernetes_hosts;
};

// sc_host: the Kubernetes node of `node_list` when it names one Slurm node that `hosts` knows.
std::optional<std::string> resolve_sc_host(std::string_view node_list,
                                           const std::map<std::string, std::string, std::less<>>& hosts);
// sc_node_hosts: {slurm node: Kubernetes node} over the expanded node list, for the nodes `hosts` knows, written as
// GCM writes it (Python's json.dumps with sorted keys: ", " and ": " separators, non-ASCII escaped); nullopt when
// none is known (an unparsable list, "None assigned").
std::optional<std::string> resolve_sc_node_hosts(std::string_view node_list,
                                                 const std::map<std::string, std::string, std::less<>>& hosts);

// A bad input that stops the command: an invalid line (without ignore_line_errors), invalid UTF-8 under strict, a
// header without an End column. The message names the input and the line.
class PublishError : public std::runtime_error {
 public:
  PublishError(size_t line, const std::string& message) : std::runtime_error(message), line_(line) {}
  size_t line() const { return line_; }

 private:
  size_t line_;
};

struct PublishStats {
  uint64_t bytes = 0;
  uint64_t lines = 0;    // physical lines, header included
  uint64_t records = 0;  // payloads emitted
  uint64_t invalid_lines = 0;
  std::vector<uint64_t> invalid_line_numbers;  // the first kMaxListed of them
  std::vector<std::string> invalid_reasons;    // parallel to invalid_line_numbers
  uint64_t utf8_fixed_lines = 0;               // lines with invalid UTF-8 repaired (ignore/replace)
  static constexpr size_t kMaxListed = 100;
};

class SacctPublisher {
 public:
  SacctPublisher(PublishOptions options, std::shared_ptr<spdlog::logger> log);

  // Reads fd to its end, emitting a record per valid data line. Throws PublishError, or std::system_error on a read
  // error.
  void run(int fd, RecordOut& out);
  // One physical line without its '\n' (the unit run() uses; tests and the fuzzer feed lines directly).
  void feed_line(std::string_view line, RecordOut& out);

  const PublishStats& stats() const { return stats_; }
  // The compact JSON size of the record just emitted (what compact_json_size() gives), computed from the line's
  // field lengths instead of a second pass over every byte: the chunking rule's input, on the hot path.
  size_t last_record_size() const { return last_size_; }
  // "Skipped N invalid line(s): 3 (12 fields where the header has 14), 9 (...)" for the summary; "" when none.
  std::string invalid_summary() const;

 private:
  struct TimeColumn {
    size_t index = SIZE_MAX;
    std::string last_in, last_out;  // rows of one job repeat the same times: convert each distinct value once
  };
  void set_header(std::string_view line);
  void process(std::string_view line, RecordOut& out);
  void invalid(const std::string& reason);
  const std::string& convert_time(TimeColumn& c, std::string_view value);
  void convert_end(std::string_view value);
  std::string_view repair_utf8(std::string_view line);

  PublishOptions o_;
  std::shared_ptr<spdlog::logger> log_;
  PublishStats stats_;
  uint64_t line_offset_ = 0;  // byte offset of the current line in the input
  bool have_header_ = false;
  size_t columns_ = 0;
  std::vector<std::string_view> fields_;
  Record record_;
  TimeColumn eligible_, start_, submit_;
  size_t end_index_ = SIZE_MAX;
  std::string end_in_, end_out_, end_ds_;
  bool end_ok_ = false;
  size_t partition_ = SIZE_MAX, nodelist_ = SIZE_MAX;
  size_t cluster_cols_[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};  // cluster, CLUSTER, Cluster
  std::vector<size_t> member_of_;  // column -> member of the sacct object (repeated names share one)
  std::string derived_key_, derived_;
  std::string scratch_;
  size_t last_size_ = 0;
  size_t fixed_size_ = 0;         // everything but the sacct values and the strings that change
  std::vector<size_t> key_size_;  // compact JSON size of each sacct key (per member)
  bool keys_plain_ = false;       // every sacct key needs no JSON escaping (is_json_plain_ascii)
  std::string sized_cluster_, sized_derived_;
  std::string hosts_key_;  // the NodeList sc_host/sc_node_hosts were resolved for (rows of one job repeat it)
  bool hosts_resolved_ = false;
  std::optional<std::string> sc_host_, sc_node_hosts_;
  size_t cluster_size_ = 0, derived_size_ = 0;
};

// The first invalid UTF-8 byte of s, or npos.
size_t first_invalid_utf8(std::string_view s);
// s with invalid UTF-8 dropped (replace=false) or each invalid byte replaced by U+FFFD, appended to out.
void fix_utf8(std::string_view s, bool replace, std::string& out);

}  // namespace gcm::sacct
