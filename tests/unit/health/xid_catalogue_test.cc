// The XID catalogue: the built-in table and a site's overrides.
#include "health/xid_catalogue.h"

#include <gtest/gtest.h>

#include <string>

namespace gcm::health {
namespace {

TEST(XidCatalogue, BuiltinHoldsAppendixAAndNvidiaActions) {
  const XidCatalogue& c = XidCatalogue::builtin();
  EXPECT_GE(c.size(), 143u);
  // GCM's non-critical set, and nothing else, is WARNING.
  for (int code = 1; code <= 143; ++code) {
    bool non_critical =
        code == 13 || code == 31 || code == 43 || code == 45 || code == 63 || code == 68 || code == 92 || code == 109;
    EXPECT_EQ(c.lookup(code).severity, non_critical ? XidSeverity::Warn : XidSeverity::Critical) << code;
  }
  XidInfo x31 = c.lookup(31);
  EXPECT_EQ(x31.causes, (std::vector<std::string>{"Driver Error", "HW Error", "User App Error"}));
  XidInfo x48 = c.lookup(48);
  EXPECT_EQ(x48.causes, std::vector<std::string>{"HW Error"});
  EXPECT_EQ(x48.description, "Double Bit ECC Error");
  EXPECT_EQ(x48.immediate_action, "WORKFLOW_XID_48");
  XidInfo x79 = c.lookup(79);
  EXPECT_EQ(x79.immediate_action, "RESTART_BM");
  EXPECT_TRUE(c.lookup(5).causes.empty());
  // A code the catalogue does not know is critical, as in GCM.
  EXPECT_EQ(c.lookup(9999).severity, XidSeverity::Critical);
  EXPECT_EQ(c.lookup(154).mnemonic, "GPU_RECOVERY_ACTION_CHANGED");
}

TEST(XidCatalogue, OverridesAndErrors) {
  XidCatalogue c = XidCatalogue::builtin();
  c.apply_override("63=ignore");
  c.apply_override("48=warn");
  c.apply_override("5000=ignore");
  EXPECT_EQ(c.lookup(63).severity, XidSeverity::Ignore);
  EXPECT_EQ(c.lookup(48).severity, XidSeverity::Warn);
  EXPECT_EQ(c.lookup(48).causes, std::vector<std::string>{"HW Error"});  // the rest of the entry stays
  EXPECT_EQ(c.lookup(5000).severity, XidSeverity::Ignore);
  EXPECT_THROW(c.apply_override("63"), XidCatalogueError);
  EXPECT_THROW(c.apply_override("x=warn"), XidCatalogueError);
  EXPECT_THROW(c.apply_override("63=fatal"), XidCatalogueError);
  try {
    XidCatalogue::parse("[[xid]]\ncode = 1\n\n[[xid]]\ncode = 2\nseverity = \"loud\"\n", "site.toml");
    FAIL() << "no error";
  } catch (const XidCatalogueError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("site.toml: line 4"), std::string::npos) << m;
    EXPECT_NE(m.find("loud"), std::string::npos) << m;
  }
  EXPECT_THROW(XidCatalogue::parse("[[xid]]\ncode = 1\n[[xid]]\ncode = 1\n", "dup.toml"), XidCatalogueError);
  EXPECT_THROW(XidCatalogue::parse("xid = [\n", "broken.toml"), XidCatalogueError);
}

}  // namespace
}  // namespace gcm::health
