// What the protobuf parser checks of a message, for the bytes the wire rewriter copies without interpreting them:
// a body it forwards must be one the message path would have accepted. The rules come from the generated
// descriptors (so they follow the .proto files): embedded messages are checked recursively, proto3 strings must be
// UTF-8, packed repeated scalars must be whole; a field whose wire type does not match its declaration is an
// unknown field to protobuf, and unknown fields only need sound framing (which read_field checks).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "processor/wire_format.h"

namespace gcm::processor::wire {

enum class Kind : uint8_t { Unknown, Scalar, String, Bytes, Message, PackedVarint, PackedFixed64, PackedFixed32 };

struct MessageRules;

struct FieldRule {
  Kind kind = Kind::Unknown;
  uint8_t type = 0;                       // the wire type the declaration uses
  const MessageRules* message = nullptr;  // Kind::Message
};

struct MessageRules {
  std::vector<FieldRule> by_number;  // indexed by field number; numbers past the end are unknown fields
  const FieldRule& operator[](uint32_t number) const {
    static const FieldRule unknown;
    return number < by_number.size() ? by_number[number] : unknown;
  }
};

// The rules of a message type of the OTLP requests (built once, for every type reachable from the three requests).
const MessageRules& rules_of(const google::protobuf::Descriptor* d);

template <typename Message>
const MessageRules& rules_of() {
  static const MessageRules& r = rules_of(Message::descriptor());
  return r;
}

// Nesting deeper than this is refused (protobuf's own limit is 100, so whatever protobuf refuses for depth is refused).
inline constexpr int kMaxDepth = 90;

// Throws WireReject where protobuf's parser would refuse the field (or the message) at this nesting depth.
void check_field(const FieldRule& rule, const Field& f, int depth);
void check_message(const MessageRules& rules, std::string_view bytes, int depth);
void check_utf8(std::string_view s);

}  // namespace gcm::processor::wire
