// The reference's `flatten` (stdout METRIC form and OTLP log attributes): nulls dropped, nested objects joined with
// ".", list items keyed by index, and a nested object that has a "name" member keyed by that name instead (the
// "name" member itself is dropped), e.g. {"obj1": {"name": "M", "x": 1}} -> {"obj1.M.x": 1}.
#pragma once

#include <functional>
#include <string_view>

#include "core/record.h"

namespace gcm {

using FlatVisitor = std::function<void(std::string_view key, const Value& scalar)>;

void flatten_record(const Record& r, const FlatVisitor& visit);
void flatten_value(std::string_view prefix, const Value& v, const FlatVisitor& visit);

}  // namespace gcm
