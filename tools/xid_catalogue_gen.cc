// Build-time tool: turns data/xid-catalogue.toml into a C++ table (the xid check's built-in catalogue), so the
// program never parses TOML for it at run time. Usage: xid_catalogue_gen INPUT.toml OUTPUT.cc
#include <cstdio>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "health/xid_catalogue.h"

namespace {

// A C++ string literal of s.
std::string literal(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

const char* severity_enum(gcm::health::XidSeverity s) {
  switch (s) {
    case gcm::health::XidSeverity::Ignore:
      return "XidSeverity::Ignore";
    case gcm::health::XidSeverity::Warn:
      return "XidSeverity::Warn";
    case gcm::health::XidSeverity::Critical:
      return "XidSeverity::Critical";
  }
  return "XidSeverity::Critical";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: xid_catalogue_gen INPUT.toml OUTPUT.cc\n";
    return 2;
  }
  try {
    auto cat = gcm::health::XidCatalogue::load_file(argv[1]);
    std::string out = fmt::format(
        "// Generated from {} by tools/xid_catalogue_gen: edit the data file, not this one.\n"
        "#include \"health/xid_catalogue.h\"\n\nnamespace gcm::health {{\n\nconst XidEntryData kBuiltinXidEntries[] = "
        "{{\n",
        "data/xid-catalogue.toml");
    auto entries = cat.entries();
    for (const auto& e : entries) {
      std::string causes;
      for (const auto& c : e.causes) causes += (causes.empty() ? "" : "|") + c;
      out += fmt::format("    {{{}, {}, {}, {}, {}, {}, {}}},\n", e.code, severity_enum(e.severity), literal(causes),
                         literal(e.mnemonic), literal(e.description), literal(e.immediate_action),
                         literal(e.investigatory_action));
    }
    out += fmt::format(
        "}};\nconst size_t kBuiltinXidEntryCount = {};\nconst char* const kBuiltinXidCatalogueVersion = "
        "{};\n\n}}  // namespace gcm::health\n",
        entries.size(), literal(cat.version()));
    std::ofstream f(argv[2]);
    f << out;
    if (!f) {
      std::cerr << "cannot write " << argv[2] << "\n";
      return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "xid_catalogue_gen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
