// scan_item for a request whose items repeat their attribute lists. An exporter labels every point of a GPU alike
// (dcgm-exporter: gpu, UUID, device, modelName, Hostname, ... on each of its ~40 metrics), so a request of 8 GPUs
// holds hundreds of points but only 8 distinct attribute lists. Reading and checking those KeyValues (UTF-8 of every
// key and string, each AnyValue's fields) was the largest part of the rewriting; the bytes of a list already read
// are compared instead, and its reading is reused with the pointers moved onto this item.
//
// Equal bytes read alike and pass or fail the same checks, so the result is exactly scan_item's: the memo takes an
// item only when its attributes are one run of fields equal to a remembered run (read at the same depth, for the
// same attribute field) and no attribute field follows that run; everything else goes to scan_item. The fields
// around the run are read and checked as scan_item does. One difference, for speed: the whole list (ItemScan::attrs)
// of an item whose list was remembered is made only when complete() asks for it (see ItemScan).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "processor/wire_attributes.h"

namespace gcm::processor::wire {

class AttributeMemo {
 public:
  // As scan_item (same arguments, same result, same WireReject), except ItemScan::attrs: see complete().
  void scan(std::string_view content, uint32_t attr_no, const MessageRules& rules, int depth, ItemScan& s);
  // Gives `s`, the item scan() read last, its whole attribute list, for the one writer that reads it again (to replace
  // values in place). Made only when asked: our agent's points carry "uuid", an added key, yet nearly all of them are
  // written with one insertion, and copying their lists onto every point would be paid for nothing.
  void complete(ItemScan& s);
  // Before the next request: what was remembered points into the last request's body. The lists keep their room.
  void forget() {
    used_ = next_ = last_hit_ = 0;
    pending_ = nullptr;
  }

 private:
  struct Span {
    int32_t off = -1;  // from the run's start; -1: an empty view without data (a KeyValue without key or value)
    uint32_t size = 0;
  };
  struct AttrAt {  // an Attr as offsets into its run
    uint32_t begin, end;
    Span kv, key, value;
    bool has_value, value_twice;
  };
  struct Run {
    std::string_view bytes;  // in the request body, which outlives the memo
    uint32_t attr_no = 0;
    int depth = 0;
    std::vector<AttrAt> attrs;
    std::optional<AttrAt> gpu, uuid;
    uint16_t added_keys = 0;
    uint64_t id = 0;  // ItemScan::list_id
  };

  static Span span_of(std::string_view v, const char* base);
  static std::string_view view_of(Span s, const char* base);
  static AttrAt at_of(const Attr& a, const char* base);
  static Attr attr_of(const AttrAt& a, const char* base);
  const Run* find(const char* at, const char* end, uint32_t attr_no, int depth);
  uint64_t remember(const ItemScan& s, uint32_t attr_no, int depth);  // the run's id, 0 when not remembered

  static constexpr size_t kRuns = 16;  // 8 GPUs and a few other label sets; more only cost misses
  std::array<Run, kRuns> runs_;
  size_t used_ = 0;
  size_t next_ = 0;  // the slot the next remembered run takes once all are used
  size_t last_hit_ = 0;
  uint64_t ids_ = 0;                  // the last id given
  const Run* pending_ = nullptr;      // the run whose Attrs the last item scanned has not been given yet
  const char* pending_at_ = nullptr;  // where that run is in the item
};

}  // namespace gcm::processor::wire
