#include "processor/wire_schema.h"

#include <map>
#include <mutex>

#include "logs_service.pb.h"
#include "metrics_service.pb.h"
#include "trace_service.pb.h"

namespace gcm::processor::wire {

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

FieldRule scalar_rule(const FieldDescriptor* f) {
  uint8_t type;
  switch (f->type()) {
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      type = kFixed64;
      break;
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
      type = kFixed32;
      break;
    default:
      type = kVarint;
      break;  // ints, bool, enum (proto3 enums are open: any value parses)
  }
  if (!f->is_repeated()) return {Kind::Scalar, type, nullptr};
  // A repeated scalar parses both unpacked (its own wire type) and packed (length-delimited).
  Kind packed = type == kFixed64 ? Kind::PackedFixed64 : type == kFixed32 ? Kind::PackedFixed32 : Kind::PackedVarint;
  return {packed, type, nullptr};
}

class Builder {
 public:
  const MessageRules& build(const Descriptor* d) {
    auto [it, fresh] = rules_.try_emplace(d);
    if (!fresh) return it->second;  // built or being built (the OTLP types are recursive through AnyValue)
    MessageRules& r = it->second;
    int max_number = 0;
    for (int i = 0; i < d->field_count(); ++i) max_number = std::max(max_number, d->field(i)->number());
    r.by_number.resize(static_cast<size_t>(max_number) + 1);
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      FieldRule& rule = r.by_number[static_cast<size_t>(f->number())];
      switch (f->type()) {
        case FieldDescriptor::TYPE_STRING:
          rule = {Kind::String, kLen, nullptr};
          break;
        case FieldDescriptor::TYPE_BYTES:
          rule = {Kind::Bytes, kLen, nullptr};
          break;
        case FieldDescriptor::TYPE_MESSAGE:
          rule = {Kind::Message, kLen, &build(f->message_type())};
          break;
        case FieldDescriptor::TYPE_GROUP:  // none in OTLP; read_field refuses groups
          rule = {Kind::Unknown, 3, nullptr};
          break;
        default:
          rule = scalar_rule(f);
          break;
      }
    }
    return r;
  }

 private:
  std::map<const Descriptor*, MessageRules> rules_;  // node-based: references stay valid while it grows
};

Builder& all_rules() {
  static Builder* b = [] {
    auto* built = new Builder;
    built->build(opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest::descriptor());
    built->build(opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest::descriptor());
    built->build(opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest::descriptor());
    return built;
  }();
  return *b;
}

void check_packed_varints(std::string_view s) {
  const char* p = s.data();
  const char* end = p + s.size();
  uint64_t v;
  while (p != end) p = read_varint(p, end, v, 10);
}

}  // namespace

const MessageRules& rules_of(const Descriptor* d) {
  // Every type is built when the first is asked for; later calls only find (the map is not changed any more).
  static std::mutex m;
  std::lock_guard lock(m);
  return all_rules().build(d);
}

// Strict UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF): never laxer than protobuf's check.
void check_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p != end) {
    if (end - p >= 8) {  // ASCII runs eight bytes at a time
      uint64_t w;
      std::memcpy(&w, p, 8);
      if ((w & 0x8080808080808080ull) == 0) {
        p += 8;
        continue;
      }
    }
    unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n;
    unsigned char lo = 0x80, hi = 0xbf;  // bounds of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else {
      reject("invalid UTF-8 in a string field");
    }
    if (end - p <= n) reject("invalid UTF-8 in a string field");
    if (p[1] < lo || p[1] > hi) reject("invalid UTF-8 in a string field");
    for (int i = 2; i <= n; ++i)
      if ((p[i] & 0xc0) != 0x80) reject("invalid UTF-8 in a string field");
    p += n + 1;
  }
}

void check_field(const FieldRule& rule, const Field& f, int depth) {
  switch (rule.kind) {
    case Kind::Unknown:
    case Kind::Scalar:
    case Kind::Bytes:
      return;  // framing is all there is to check (a mismatched wire type is an unknown field)
    case Kind::String:
      if (f.type == kLen) check_utf8(f.bytes);
      return;
    case Kind::Message:
      if (f.type == kLen) check_message(*rule.message, f.bytes, depth + 1);
      return;
    case Kind::PackedVarint:
      if (f.type == kLen) check_packed_varints(f.bytes);
      return;
    case Kind::PackedFixed64:
      if (f.type == kLen && f.bytes.size() % 8) reject("packed fixed64 of a partial element");
      return;
    case Kind::PackedFixed32:
      if (f.type == kLen && f.bytes.size() % 4) reject("packed fixed32 of a partial element");
      return;
  }
}

void check_message(const MessageRules& rules, std::string_view bytes, int depth) {
  if (depth > kMaxDepth) reject("nesting too deep");
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  Field f;
  while (p != end) {
    p = read_field(p, end, f);
    check_field(rules[f.number], f, depth);
  }
}

}  // namespace gcm::processor::wire
