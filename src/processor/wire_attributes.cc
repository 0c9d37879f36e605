#include "processor/wire_attributes.h"

#include "common.pb.h"
#include "processor/node_jobs.h"

namespace gcm::processor::wire {

namespace {

namespace pbc = opentelemetry::proto::common::v1;

constexpr uint32_t kKey = pbc::KeyValue::kKeyFieldNumber;
constexpr uint32_t kValue = pbc::KeyValue::kValueFieldNumber;
constexpr uint32_t kArrayValues = pbc::ArrayValue::kValuesFieldNumber;

struct KeyRole {
  std::string_view key;
  Role role;
  uint16_t added_bit;  // its bit in ItemScan::added_keys (Role::Added)
};
// As string_views: comparing with the const char* of kJobKeys would measure them (strlen) on every attribute.
constexpr std::array<KeyRole, 15> kRoles = {{{"gpu", Role::Gpu, 0},
                                             {"UUID", Role::UUID, 0},
                                             {"uuid", Role::Added, kUuidKeyBit},
                                             {kJobKeys[0], Role::Added, 1 << 0},
                                             {kJobKeys[1], Role::Added, 1 << 1},
                                             {kJobKeys[2], Role::Added, 1 << 2},
                                             {kJobKeys[3], Role::Added, 1 << 3},
                                             {kJobKeys[4], Role::Added, 1 << 4},
                                             {kJobKeys[5], Role::Added, 1 << 5},
                                             {kJobKeys[6], Role::Added, 1 << 6},
                                             {kJobKeys[7], Role::Added, 1 << 7},
                                             {kJobKeys[8], Role::Added, 1 << 8},
                                             {kPodKeys[0], Role::Added, kPodKeyBit0 << 0},
                                             {kPodKeys[1], Role::Added, kPodKeyBit0 << 1},
                                             {kPodKeys[2], Role::Added, kPodKeyBit0 << 2}}};
static_assert(kJobKeys.size() == 9 && kPodKeys.size() == 3);

KeyRole role_of(std::string_view key) {
  if (key.empty()) return {key, Role::Other, 0};
  for (const KeyRole& r : kRoles)  // length and first letter rule out nearly all before memcmp
    if (key.size() == r.key.size() && key[0] == r.key[0] && key == r.key) return r;
  return {key, Role::Other, 0};
}

// The wire type each AnyValue member is declared with; a field that does not match is an unknown field.
bool is_any_value_member(const Field& f) {
  switch (f.number) {
    case pbc::AnyValue::kStringValueFieldNumber:
    case pbc::AnyValue::kArrayValueFieldNumber:
    case pbc::AnyValue::kKvlistValueFieldNumber:
    case pbc::AnyValue::kBytesValueFieldNumber:
      return f.type == kLen;
    case pbc::AnyValue::kBoolValueFieldNumber:
    case pbc::AnyValue::kIntValueFieldNumber:
      return f.type == kVarint;
    case pbc::AnyValue::kDoubleValueFieldNumber:
      return f.type == kFixed64;
    default:
      return false;
  }
}

// An ArrayValue with fields besides its values: mutable_array_value() on it would keep them.
bool array_has_extras(std::string_view array) {
  const char* p = array.data();
  const char* end = p + array.size();
  Field f;
  while (p != end) {
    p = read_field(p, end, f);
    if (f.number != kArrayValues || f.type != kLen) return true;
  }
  return false;
}

void read_kv(Attr& a, const MessageRules& kv_rules, const MessageRules& any_rules, int depth) {
  const char* p = a.kv.data();
  const char* end = p + a.kv.size();
  Field f;
  while (p != end) {
    p = read_field(p, end, f);
    if (f.number == kKey && f.type == kLen) {
      check_utf8(f.bytes);
      a.key = f.bytes;
    } else if (f.number == kValue && f.type == kLen) {
      check_message(any_rules, f.bytes, depth + 1);
      a.value_twice = a.has_value;
      a.has_value = true;
      a.value = f.bytes;
    } else {
      check_field(kv_rules[f.number], f, depth);
    }
  }
}

}  // namespace

void scan_item(std::string_view content, uint32_t attr_no, const MessageRules& rules, int depth, ItemScan& s) {
  static const MessageRules& kv_rules = rules_of<pbc::KeyValue>();
  static const MessageRules& any_rules = rules_of<pbc::AnyValue>();
  s.attrs.clear();
  s.list_id = 0;
  s.insert_at = nullptr;
  s.added_keys = 0;
  int gpu = -1, uuid = -1;  // indices: the list may move as it grows
  const char* p = content.data();
  const char* end = p + content.size();
  const char* first_after = nullptr;  // the first field numbered after the attributes
  Field f;
  while (p != end) {
    p = read_field(p, end, f);
    if (f.number == attr_no && f.type == kLen) {
      Attr& a = s.attrs.emplace_back(Attr{f.begin, f.end, f.bytes, {}, {}});
      read_kv(a, kv_rules, any_rules, depth + 1);
      const KeyRole role = role_of(a.key);
      switch (role.role) {
        case Role::Gpu:
          gpu = static_cast<int>(s.attrs.size() - 1);
          break;
        case Role::UUID:
          uuid = static_cast<int>(s.attrs.size() - 1);
          break;
        case Role::Added:
          s.added_keys |= role.added_bit;
          break;
        case Role::Other:
          break;
      }
    } else {
      check_field(rules[f.number], f, depth);
      if (!first_after && f.number > attr_no) first_after = f.begin;
    }
  }
  // After the last attribute, else before the first later field: a body in protobuf's canonical order stays in it.
  s.insert_at = !s.attrs.empty() ? s.attrs.back().end : first_after ? first_after : end;
  s.gpu = gpu >= 0 ? std::optional<Attr>(s.attrs[static_cast<size_t>(gpu)]) : std::nullopt;
  s.uuid = uuid >= 0 ? std::optional<Attr>(s.attrs[static_cast<size_t>(uuid)]) : std::nullopt;
}

AnyValueCase any_value_case(std::string_view content) {
  AnyValueCase c;
  const char* p = content.data();
  const char* end = p + content.size();
  Field f;
  while (p != end) {
    p = read_field(p, end, f);
    if (!is_any_value_member(f)) continue;
    c.member = f.number;
    if (f.number == pbc::AnyValue::kStringValueFieldNumber) c.string = f.bytes;
    if (f.number == pbc::AnyValue::kIntValueFieldNumber) c.integer = static_cast<int64_t>(f.varint);
  }
  return c;
}

void append_attribute(std::string& out, uint32_t attr_no, std::string_view key, std::string_view value_content,
                      std::string_view kv_extras) {
  size_t kv = len_field_size(kKey, key.size()) + len_field_size(kValue, value_content.size()) + kv_extras.size();
  char buf[32];
  char* p = write_varint(buf, len_tag(attr_no));
  p = write_varint(p, kv);
  p = write_varint(p, len_tag(kKey));
  p = write_varint(p, key.size());
  out.append(buf, static_cast<size_t>(p - buf));
  out.append(key);
  p = write_varint(buf, len_tag(kValue));
  p = write_varint(p, value_content.size());
  out.append(buf, static_cast<size_t>(p - buf));
  out.append(value_content);
  out.append(kv_extras);
}

// The attribute a with its value replaced as the message path's put() replaces it: the key and the KeyValue's other
// fields stay; Set/SetList keep the old value's unknown fields (protobuf's setters leave them), Copy does not.
void ItemWriter::replace(const Attr& a, uint32_t attr_no, const Put& p) {
  std::string value(p.value);
  if (p.mode != Put::Mode::Copy && a.has_value) {
    const char* q = a.value.data();
    const char* end = q + a.value.size();
    Field f;
    while (q != end) {
      q = read_field(q, end, f);
      if (!is_any_value_member(f)) {
        value.append(f.begin, f.end);
      } else if (p.mode == Put::Mode::SetList && f.number == pbc::AnyValue::kArrayValueFieldNumber &&
                 array_has_extras(f.bytes)) {
        reject("a list attribute to replace has unknown fields");  // protobuf keeps them: left to the message path
      }
    }
  }
  std::string extras;
  const char* q = a.kv.data();
  const char* end = q + a.kv.size();
  Field f;
  while (q != end) {
    q = read_field(q, end, f);
    if (!((f.number == kKey || f.number == kValue) && f.type == kLen)) extras.append(f.begin, f.end);
  }
  size_t off = scratch_.size();
  append_attribute(scratch_, attr_no, a.key, value, extras);
  edits_.push_back({a.begin, a.end, off, scratch_.size() - off, nullptr, true});
}

void ItemWriter::write_appended(Writer& w, uint32_t field_no, std::string_view content, uint32_t attr_no,
                                const ItemScan& s, std::string_view fields, std::string_view last_key,
                                std::string_view last_value) {
  char head[48];  // the last attribute's framing up to its value's content
  char* h = head;
  if (!last_key.empty()) {
    size_t kv = len_field_size(kKey, last_key.size()) + len_field_size(kValue, last_value.size());
    if (last_key.size() > 16) reject("key too long for the appended attribute");
    h = write_varint(h, len_tag(attr_no));
    h = write_varint(h, kv);
    h = write_varint(h, len_tag(kKey));
    h = write_varint(h, last_key.size());
    std::memcpy(h, last_key.data(), last_key.size());
    h += last_key.size();
    h = write_varint(h, len_tag(kValue));
    h = write_varint(h, last_value.size());
  }
  size_t head_size = static_cast<size_t>(h - head);
  size_t before = static_cast<size_t>(s.insert_at - content.data());
  size_t size = content.size() + fields.size() + head_size + last_value.size();
  w.len_prefix(field_no, size);
  char* out = w.room(size);
  out = copy_bytes(out, content.data(), before);
  out = copy_bytes(out, fields.data(), fields.size());
  out = copy_bytes(out, head, head_size);
  out = copy_bytes(out, last_value.data(), last_value.size());
  copy_bytes(out, s.insert_at, content.size() - before);
  w.advance(size);
}

void ItemWriter::write(Writer& w, uint32_t field_no, std::string_view content, uint32_t attr_no, const ItemScan& s,
                       const Put* puts, size_t n_puts) {
  edits_.clear();
  scratch_.clear();
  // Replacements, in attribute order (then the appends, which all come after the last attribute).
  int target[kMaxPuts];
  if (n_puts > kMaxPuts) reject("too many puts");
  for (size_t i = 0; i < n_puts; ++i) {
    target[i] = -1;
    if (!s.has_added_keys()) continue;  // none of the keys we write is there: nothing to find
    for (size_t j = 0; j < s.attrs.size(); ++j) {
      if (s.attrs[j].key == puts[i].key) {
        if (s.attrs[j].value_twice) reject("an attribute to replace has its value twice");
        target[i] = static_cast<int>(j);
        break;
      }
    }
  }
  for (size_t j = 0; j < s.attrs.size(); ++j)
    for (size_t i = 0; i < n_puts; ++i)
      if (target[i] == static_cast<int>(j)) replace(s.attrs[j], attr_no, puts[i]);
  for (size_t i = 0; i < n_puts; ++i) {
    if (target[i] >= 0) continue;
    const Put& p = puts[i];
    if (!p.field.empty()) {
      Edit* last = edits_.empty() ? nullptr : &edits_.back();
      if (last && !last->in_scratch && last->at == s.insert_at && last->data + last->size == p.field.data()) {
        last->size += p.field.size();  // fields encoded side by side (the job keys): one copy
      } else {
        edits_.push_back({s.insert_at, s.insert_at, 0, p.field.size(), p.field.data(), false});
      }
    } else {
      size_t off = scratch_.size();
      append_attribute(scratch_, attr_no, p.key, p.value);
      edits_.push_back({s.insert_at, s.insert_at, off, scratch_.size() - off, nullptr, true});
    }
  }
  size_t size = content.size();
  for (const Edit& e : edits_) size += e.size - static_cast<size_t>(e.skip_to - e.at);
  w.len_prefix(field_no, size);
  char* out = w.room(size);
  const char* cursor = content.data();
  for (const Edit& e : edits_) {
    out = copy_bytes(out, cursor, static_cast<size_t>(e.at - cursor));
    out = copy_bytes(out, e.in_scratch ? scratch_.data() + e.off : e.data, e.size);
    cursor = e.skip_to;
  }
  copy_bytes(out, cursor, static_cast<size_t>(content.data() + content.size() - cursor));
  w.advance(size);
}

}  // namespace gcm::processor::wire
