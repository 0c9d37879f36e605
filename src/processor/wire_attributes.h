// Attribute lists on the wire: reading an item's attributes (a data point, log record, span or resource) and writing
// the item again with attributes put, as the message path's put() does: a key already there gets its value replaced
// in place (the first entry with that key), a new key is appended after the existing attributes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "processor/wire_schema.h"
#include "processor/wire_writer.h"

namespace gcm::processor::wire {

// One KeyValue of an item, as read.
struct Attr {
  const char* begin;  // the whole attribute field in the item
  const char* end;
  std::string_view kv;     // the KeyValue's content
  std::string_view key;    // the last `key` field (protobuf keeps the last)
  std::string_view value;  // the AnyValue's content
  bool has_value = false;
  bool value_twice = false;  // protobuf would merge the two: only refused where the value is read or replaced
};

enum class Role : uint8_t { Other, Gpu, UUID, Added };  // Added: a key the enrichment writes (job keys, uuid)
// ItemScan::added_keys: the nine job keys are bits 0-8, uuid bit 9, the three pod keys bits 10-12.
inline constexpr uint16_t kJobKeyBits = 0x1ff;
inline constexpr uint16_t kUuidKeyBit = 0x200;
inline constexpr uint16_t kPodKeyBit0 = 0x400;

struct ItemScan {
  // Every attribute, in order. For an item whose list it remembered, AttributeMemo fills it only when asked
  // (AttributeMemo::complete), for the one writer that reads the whole list again (to replace values in place):
  // copying a remembered list onto every point would be paid on every point for the two attributes that are read on
  // every item, kept apart below.
  std::vector<Attr> attrs;
  const char* insert_at = nullptr;  // where new attributes go: after the last one, else in field-number order
  std::optional<Attr> gpu;          // the last `gpu` attribute (the message path's scan keeps the last)
  std::optional<Attr> uuid;         // the last `UUID`
  uint16_t added_keys = 0;          // which keys we write are there: bit k for kJobKeys[k], kUuidKeyBit for "uuid", ...
  bool has_added_keys() const { return added_keys != 0; }
  // Set by AttributeMemo: the remembered list this item's attributes are byte for byte (unique per memo, never
  // reused), so what follows from them alone (the job of their `gpu`) can be kept per list; 0 when none.
  uint64_t list_id = 0;
};

// Reads the item's fields (checking all of them as protobuf would) and its attributes (field attr_no).
// depth is the item's nesting depth.
void scan_item(std::string_view content, uint32_t attr_no, const MessageRules& rules, int depth, ItemScan& s);

// The case an AnyValue's content sets (its last oneof member) and that member's value.
struct AnyValueCase {
  uint32_t member = 0;      // AnyValue field number; 0 when none
  std::string_view string;  // member 1
  int64_t integer = 0;      // member 3
};
AnyValueCase any_value_case(std::string_view content);

// A value to put under a key.
struct Put {
  enum class Mode : uint8_t {
    Set,      // set_string_value: the old value's unknown fields stay
    SetList,  // mutable_array_value + clear: likewise
    Copy,     // CopyFrom: the value is replaced whole
  };
  std::string_view key;
  std::string_view value;  // the new AnyValue content
  std::string_view field;  // the whole attribute field to append, when encoded beforehand; empty: encoded here
  Mode mode = Mode::Set;
};

// Appends an attribute field (tag attr_no, KeyValue{key, value{value_content}, kv_extras}) to out.
void append_attribute(std::string& out, uint32_t attr_no, std::string_view key, std::string_view value_content,
                      std::string_view kv_extras = {});

// Writes the item as field `field_no` of its parent with the puts applied; puts are applied in order.
class ItemWriter {
 public:
  static constexpr size_t kMaxPuts = 16;
  void write(Writer& w, uint32_t field_no, std::string_view content, uint32_t attr_no, const ItemScan& s,
             const Put* puts, size_t n_puts);

  // The common case, when none of the keys put is there yet (none of s.added_keys): the content with attribute fields
  // inserted at s.insert_at, `fields` (encoded beforehand) and then, when last_key is not empty, one encoded here.
  static void write_appended(Writer& w, uint32_t field_no, std::string_view content, uint32_t attr_no,
                             const ItemScan& s, std::string_view fields, std::string_view last_key,
                             std::string_view last_value);

 private:
  struct Edit {
    const char* at;       // where in the content
    const char* skip_to;  // the content resumes here
    size_t off;           // the bytes written instead: scratch_[off, off + size) when in_scratch, else data
    size_t size;
    const char* data;
    bool in_scratch;
  };
  void replace(const Attr& a, uint32_t attr_no, const Put& p);

  std::vector<Edit> edits_;
  std::string scratch_;
};

}  // namespace gcm::processor::wire
