// The catalogue compiled in from data/xid-catalogue.toml (the table itself is generated at build time).
#include "health/xid_catalogue.h"

namespace gcm::health {

const XidCatalogue& XidCatalogue::builtin() {
  static const XidCatalogue cat = [] {
    XidCatalogue c;
    c.table_ = kBuiltinXidEntries;
    c.table_size_ = kBuiltinXidEntryCount;
    c.version_ = kBuiltinXidCatalogueVersion;
    return c;
  }();
  return cat;
}

}  // namespace gcm::health
