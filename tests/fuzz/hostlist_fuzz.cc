// libFuzzer: hostlist parsing never crashes; what parses expands, compresses back to the same names, has a
// canonical form that is a fixed point, and contains every name it expands to.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "slurm/hostlist.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    gcm::slurm::Hostlist h = gcm::slurm::Hostlist::parse(text, 1u << 16);
    std::vector<std::string> names;
    h.append_to(names);
    if (names.size() != h.size()) std::abort();
    std::string compressed = gcm::slurm::compress_hostlist(names);
    if (gcm::slurm::expand_hostlist(compressed) != names) std::abort();
    if (gcm::slurm::canonical_hostlist(compressed) != compressed) std::abort();
    for (size_t i = 0; i < names.size(); i += 1 + names.size() / 16) {
      if (!h.contains(names[i])) std::abort();
    }
  } catch (const gcm::slurm::HostlistError& e) {
    if (e.position() > text.size()) std::abort();
  }
  return 0;
}

const bool kHostlistFuzzRegistered = gcm::fuzz::register_target("hostlist_fuzz", fuzz_one);

}  // namespace
