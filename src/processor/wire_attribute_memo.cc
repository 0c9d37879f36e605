#include "processor/wire_attribute_memo.h"

#include <cstring>

namespace gcm::processor::wire {

AttributeMemo::Span AttributeMemo::span_of(std::string_view v, const char* base) {
  if (v.data() == nullptr) return {};
  return {static_cast<int32_t>(v.data() - base), static_cast<uint32_t>(v.size())};
}

std::string_view AttributeMemo::view_of(Span s, const char* base) {
  if (s.off < 0) return {};
  return {base + s.off, s.size};
}

AttributeMemo::AttrAt AttributeMemo::at_of(const Attr& a, const char* base) {
  return {static_cast<uint32_t>(a.begin - base),
          static_cast<uint32_t>(a.end - base),
          span_of(a.kv, base),
          span_of(a.key, base),
          span_of(a.value, base),
          a.has_value,
          a.value_twice};
}

Attr AttributeMemo::attr_of(const AttrAt& a, const char* base) {
  return Attr{base + a.begin,         base + a.end, view_of(a.kv, base), view_of(a.key, base),
              view_of(a.value, base), a.has_value,  a.value_twice};
}

const AttributeMemo::Run* AttributeMemo::find(const char* at, const char* end, uint32_t attr_no, int depth) {
  size_t room = static_cast<size_t>(end - at);
  for (size_t k = 0; k < used_; ++k) {
    size_t i = (last_hit_ + k) % used_;  // a metric's points come GPU after GPU: the next run is likely the one
    const Run& r = runs_[i];
    if (r.attr_no != attr_no || r.depth != depth || r.bytes.size() > room) continue;
    if (std::memcmp(r.bytes.data(), at, r.bytes.size()) != 0) continue;
    last_hit_ = (i + 1) % used_;
    return &r;
  }
  return nullptr;
}

uint64_t AttributeMemo::remember(const ItemScan& s, uint32_t attr_no, int depth) {
  if (s.attrs.empty()) return 0;
  for (size_t i = 1; i < s.attrs.size(); ++i)
    if (s.attrs[i - 1].end != s.attrs[i].begin) return 0;  // not one run: left to scan_item each time
  const char* base = s.attrs.front().begin;
  size_t size = static_cast<size_t>(s.attrs.back().end - base);
  if (size > INT32_MAX) return 0;
  Run& r = runs_[used_ < kRuns ? used_++ : next_];
  if (used_ == kRuns) next_ = (next_ + 1) % kRuns;
  r.bytes = {base, size};
  r.attr_no = attr_no;
  r.depth = depth;
  r.gpu = s.gpu ? std::optional<AttrAt>(at_of(*s.gpu, base)) : std::nullopt;
  r.uuid = s.uuid ? std::optional<AttrAt>(at_of(*s.uuid, base)) : std::nullopt;
  r.added_keys = s.added_keys;
  r.attrs.clear();
  for (const Attr& a : s.attrs) r.attrs.push_back(at_of(a, base));
  r.id = ++ids_;
  return r.id;
}

void AttributeMemo::complete(ItemScan& s) {
  if (!pending_) return;  // scan_item's reading: the list is there
  for (const AttrAt& a : pending_->attrs) s.attrs.push_back(attr_of(a, pending_at_));
  pending_ = nullptr;
}

void AttributeMemo::scan(std::string_view content, uint32_t attr_no, const MessageRules& rules, int depth,
                         ItemScan& s) {
  const char* p = content.data();
  const char* end = p + content.size();
  Field f;
  // The fields before the first attribute, checked as scan_item checks them.
  const char* run = nullptr;
  while (p != end) {
    const char* at = p;
    p = read_field(p, end, f);
    if (f.number == attr_no && f.type == kLen) {
      run = at;
      break;
    }
    check_field(rules[f.number], f, depth);
  }
  pending_ = nullptr;
  const Run* known = run ? find(run, end, attr_no, depth) : nullptr;
  if (!known) {
    scan_item(content, attr_no, rules, depth, s);
    s.list_id = remember(s, attr_no, depth);
    return;
  }
  // The fields after the run: no attribute among them, else its reading is scan_item's.
  const char* q = run + known->bytes.size();
  while (q != end) {
    q = read_field(q, end, f);
    if (f.number == attr_no && f.type == kLen) {
      scan_item(content, attr_no, rules, depth, s);
      s.list_id = 0;
      return;
    }
    check_field(rules[f.number], f, depth);
  }
  s.attrs.clear();
  pending_ = known;
  pending_at_ = run;
  s.gpu = known->gpu ? std::optional<Attr>(attr_of(*known->gpu, run)) : std::nullopt;
  s.uuid = known->uuid ? std::optional<Attr>(attr_of(*known->uuid, run)) : std::nullopt;
  s.added_keys = known->added_keys;
  s.insert_at = run + known->attrs.back().end;  // as scan_item: after the last attribute
  s.list_id = known->id;
}

}  // namespace gcm::processor::wire
