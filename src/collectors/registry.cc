#include <cstdio>
#include <cstdlib>

#include "collectors/collector.h"

namespace gcm {

namespace {
std::map<std::string, CollectorSpec>& collectors() {
  static std::map<std::string, CollectorSpec> r;
  return r;
}
}  // namespace

bool register_collector(CollectorSpec spec) {
  if (collectors().count(spec.name)) {
    std::fprintf(stderr, "collector '%s' is registered twice\n", spec.name.c_str());
    std::abort();
  }
  std::string name = spec.name;
  collectors().emplace(name, std::move(spec));
  return true;
}

const std::map<std::string, CollectorSpec>& collector_registry() { return collectors(); }

}  // namespace gcm
