#include "core/record.h"

#include <stdexcept>
#include <string>

namespace gcm {

Value& Record::at(std::string_view field) {
  int i = schema->index_of(field);
  if (i < 0) throw std::out_of_range("record " + schema->name + " has no field '" + std::string(field) + "'");
  return values[static_cast<size_t>(i)];
}

const Value& Record::at(std::string_view field) const { return const_cast<Record*>(this)->at(field); }

}  // namespace gcm
