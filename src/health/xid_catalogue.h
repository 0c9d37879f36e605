// The XID catalogue: what each NVIDIA XID code means, GCM's cause labels, NVIDIA's actions, and the severity the
// xid check reports. The project's catalogue (data/xid-catalogue.toml) is turned into a constant table at build time
// (tools/xid_catalogue_gen) so a check never depends on an installed file and never pays for parsing TOML at start
// (parsing the 158 entries cost more than the rest of the check); a site can replace it (--xid-catalogue, parsed at
// run time) or override single codes.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gcm::health {

enum class XidSeverity { Ignore, Warn, Critical };

std::optional<XidSeverity> parse_xid_severity(std::string_view s);  // "ignore", "warn"/"warning", "critical"
const char* to_string(XidSeverity s);

struct XidInfo {
  int code = 0;
  XidSeverity severity = XidSeverity::Critical;
  std::vector<std::string> causes;  // sorted, as the message prints them
  std::string mnemonic, description, immediate_action, investigatory_action;
};

// One entry of the built-in table; causes are '|'-separated and sorted.
struct XidEntryData {
  int code;
  XidSeverity severity;
  const char* causes;
  const char* mnemonic;
  const char* description;
  const char* immediate_action;
  const char* investigatory_action;
};

struct XidCatalogueError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class XidCatalogue {
 public:
  // The catalogue compiled into the binary.
  static const XidCatalogue& builtin();
  // Parses catalogue TOML; `source` names the input in errors. Throws XidCatalogueError.
  static XidCatalogue parse(std::string_view toml_text, const std::string& source);
  static XidCatalogue load_file(const std::string& path);

  // The entry of a code; codes missing from the catalogue are critical with no causes (GCM's rule).
  XidInfo lookup(int code) const;
  // Every entry, by code.
  std::vector<XidInfo> entries() const;
  // "63=ignore"-style override; throws XidCatalogueError naming the bad entry.
  void apply_override(std::string_view code_eq_level);
  size_t size() const { return entries().size(); }
  const std::string& version() const { return version_; }

 private:
  std::map<int, XidInfo> entries_;       // parsed entries and overrides; they win over the table
  const XidEntryData* table_ = nullptr;  // sorted by code
  size_t table_size_ = 0;
  std::string version_;
};

// data/xid-catalogue.toml as a table (generated source).
extern const XidEntryData kBuiltinXidEntries[];
extern const size_t kBuiltinXidEntryCount;
extern const char* const kBuiltinXidCatalogueVersion;

}  // namespace gcm::health
