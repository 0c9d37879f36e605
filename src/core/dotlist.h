// Sink options given as `-o key=value`: the reference's OmegaConf dot-list with YAML-typed values.
//
//   otel_timeout=30                    -> int
//   ratio=0.5                          -> float
//   insecure=true                      -> bool (true/false, any case)
//   x=null / x=~                       -> null
//   hosts=[a, b]                       -> list
//   log_resource_attributes={'k': 'v'} -> dict
//   a.b=1                              -> nested dict {"a": {"b": 1}}
//   anything else                      -> string (quotes optional, stripped)
// The last occurrence of a key wins. Written by hand: no YAML library is needed for this small flow subset.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/value.h"

namespace gcm {

struct DotlistError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses one YAML flow value ("[1, 2]", "{'a': 1}", "3.5", "'quoted'", "plain text").
Value parse_flow_value(std::string_view text);

// Parses every `key=value` item into one object. Throws DotlistError naming the item and the problem.
Value parse_dotlist(const std::vector<std::string>& items);

}  // namespace gcm
