// `scontrol show <entity>` output: "Key=Value Key2=Value with spaces" tokens, one entity per line (-o) or per block
// of indented lines (show job -d, show node, show partition), and `scontrol show config`'s "Key = Value" lines.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/parse_error.h"

namespace gcm::slurm {

struct KeyValue {
  std::string_view key, value;
  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};

// One entity. Keys keep their order and may repeat (show job -d prints a "Nodes=... GRES=..." line per node).
struct ScontrolRecord {
  std::vector<KeyValue> fields;
  std::vector<std::string_view> loose_words;  // words before any key ("No jobs in the system")

  // The first value of key; nullopt when absent.
  std::optional<std::string_view> get(std::string_view key) const;
  // Every value of key, in order.
  std::vector<std::string_view> all(std::string_view key) const;
  void clear() {
    fields.clear();
    loose_words.clear();
  }
};

// Splits one line into Key=Value pairs, appended to record. Words are separated by blanks; a word that starts a
// key (a letter, then letters, digits, '_', ':' or '/', then '=': "JobId=", "AllocNode:Sid=", "CPUs/Task=") starts
// a pair, split at its first '='; any other word continues the value before it, so
// "Reason=Not responding [slurm@2024-01-02T03:04:05]" or "JobName=my job" stay whole (design.md §5 fix: the
// reference split such values apart, or failed). Limit: a value word that itself looks like "key=" ("JobName=run
// lr=0.1") starts a new pair; scontrol's output cannot tell the two apart.
void split_scontrol_line(std::string_view line, ScontrolRecord& record);

// Streaming: a record starts at every line that is not indented, continues over indented lines and ends at a blank
// line or the next unindented line. So `-o` output (one entity per line) and block output (an unindented first
// line, indented continuation lines, blank lines between entities) both work. Lines are copied into one buffer per
// record (the fed views may die after feed()); the record's views point into that buffer.
class ScontrolParser {
 public:
  // Feeds one line (without '\n'). Returns the record completed by this line (valid until the next call), or
  // nullptr.
  const ScontrolRecord* feed(std::string_view line);
  // At the end of input: the last record, or nullptr.
  const ScontrolRecord* finish();

  size_t lines() const { return line_number_; }
  // The line number of the first line of the record last returned.
  size_t record_line() const { return done_line_; }

 private:
  const ScontrolRecord* complete();

  std::string open_;  // lines of the record being read, '\n'-joined
  size_t open_line_ = 0;
  std::string done_;  // text of the record last returned
  ScontrolRecord record_;
  size_t line_number_ = 0, done_line_ = 0;
};

// A whole output at once; views into text (nothing copied), so text must outlive the records. A temporary string
// is refused at compile time.
std::vector<ScontrolRecord> parse_scontrol_records(std::string_view text);
std::vector<ScontrolRecord> parse_scontrol_records(std::string&& text) = delete;
inline std::vector<ScontrolRecord> parse_scontrol_records(const char* text) {  // literals live forever
  return parse_scontrol_records(std::string_view(text));
}

// One `scontrol show config` line ("AccountingStoragePort   = 6819"): the text before the first '=' and after it,
// both stripped; nullopt for lines without '=' ("Configuration data as of ...", section titles). The reference's
// regex ([^=]+)=\s*(.*).
std::optional<KeyValue> parse_config_line(std::string_view line);

// Every pair of a `scontrol show config` output, in order (later sections may repeat a key; the reference keeps the
// last). Views into text, which must outlive them.
std::vector<KeyValue> parse_scontrol_config(std::string_view text);
std::vector<KeyValue> parse_scontrol_config(std::string&& text) = delete;
inline std::vector<KeyValue> parse_scontrol_config(const char* text) {
  return parse_scontrol_config(std::string_view(text));
}

}  // namespace gcm::slurm
