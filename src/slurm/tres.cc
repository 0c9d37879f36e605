#include "slurm/tres.h"

#include "slurm/coerce.h"
#include "slurm/memory.h"

namespace gcm::slurm {

namespace {

// Splits on ',' and each item on its only '='; on_entry returns nothing. Throws ParseError naming the item.
template <typename OnEntry>
void for_each_tres_entry(std::string_view tres, OnEntry&& on_entry) {
  size_t start = 0;
  while (true) {
    size_t comma = tres.find(',', start);
    std::string_view item =
        tres.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || item.find('=', eq + 1) != std::string_view::npos)
      throw ParseError(describe_bad_value("TRES", tres, "item '" + std::string(item) + "' is not key=value"));
    on_entry(TresEntry{item.substr(0, eq), item.substr(eq + 1)});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

}  // namespace

std::vector<TresEntry> parse_tres_entries(std::string_view tres) {
  std::vector<TresEntry> entries;
  if (tres.empty() || tres == "(null)" || tres == "N/A") return entries;
  for_each_tres_entry(tres, [&](const TresEntry& e) { entries.push_back(e); });
  return entries;
}

int64_t tres_entry_number(const TresEntry& entry) {
  if (entry.key == "mem" || entry.key == "gres/gpumem") return convert_memory_to_mb(entry.value);
  if (auto v = python_int(entry.value)) return *v;
  throw ParseError(describe_bad_value("TRES value of " + std::string(entry.key), entry.value, "not an integer"));
}

int64_t tres_value(std::string_view tres, std::string_view key) {
  if (tres.empty() || tres == "(null)") return 0;
  // The reference builds a dict of every item first, so a malformed item fails even when key is elsewhere, and a
  // repeated key keeps its last value.
  const TresEntry* found = nullptr;
  TresEntry last;
  for_each_tres_entry(tres, [&](const TresEntry& e) {
    if (e.key == key) {
      last = e;
      found = &last;
    }
  });
  if (!found) return 0;
  if (key == "mem") return convert_memory_to_mb(found->value);
  if (auto v = python_int(found->value)) return *v;
  throw ParseError(describe_bad_value("TRES value of " + std::string(key), found->value, "not an integer"));
}

}  // namespace gcm::slurm
