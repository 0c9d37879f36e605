#include "slurm/hostlist.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace gcm::slurm {
namespace {

using Names = std::vector<std::string>;

size_t error_position(std::string_view text) {
  try {
    (void)Hostlist::parse(text);
  } catch (const HostlistError& e) {
    return e.position();
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return SIZE_MAX;
}

TEST(Hostlist, ReferenceExamples) {
  EXPECT_EQ(expand_hostlist("h200-183-[001-003]"), (Names{"h200-183-001", "h200-183-002", "h200-183-003"}));
  EXPECT_EQ(expand_hostlist("h100-193-[039,041,043]"), (Names{"h100-193-039", "h100-193-041", "h100-193-043"}));
  EXPECT_EQ(expand_hostlist("h100-095-096,h100-193-[043,073],h100-228-185"),
            (Names{"h100-095-096", "h100-193-043", "h100-193-073", "h100-228-185"}));
  EXPECT_EQ(nodelist_or_null("(null)"), std::nullopt);
  EXPECT_EQ(nodelist_or_null("None assigned"), std::nullopt);
  EXPECT_EQ(nodelist_or_null("N/A"), std::nullopt);
  EXPECT_EQ(nodelist_or_null(" (null) "), std::nullopt);
  EXPECT_EQ(nodelist_or_null(""), std::nullopt);
  EXPECT_EQ(nodelist_or_null("node[1-2"), std::nullopt);
  EXPECT_EQ(nodelist_or_null("n[1-2]"), (Names{"n1", "n2"}));
}

TEST(Hostlist, RangesAndPadding) {
  EXPECT_EQ(expand_hostlist("node[001-010,015]").size(), 11u);
  EXPECT_EQ(expand_hostlist("node[001-010,015]").back(), "node015");
  EXPECT_EQ(expand_hostlist("n[009-011]"), (Names{"n009", "n010", "n011"}));
  EXPECT_EQ(expand_hostlist("n[8-10]"), (Names{"n8", "n9", "n10"}));
  EXPECT_EQ(expand_hostlist("n[015]"), (Names{"n015"}));
  EXPECT_EQ(expand_hostlist("n[98-101]"), (Names{"n98", "n99", "n100", "n101"}));
  EXPECT_EQ(expand_hostlist("n[098-101]"), (Names{"n098", "n099", "n100", "n101"}));
  EXPECT_EQ(expand_hostlist("n[0]"), (Names{"n0"}));
}

TEST(Hostlist, CartesianProductFirstGroupSlowest) {
  EXPECT_EQ(expand_hostlist("node[1-2][3-4]"), (Names{"node13", "node14", "node23", "node24"}));
  EXPECT_EQ(expand_hostlist("rack[1-2]-node[01-02]"),
            (Names{"rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"}));
  EXPECT_EQ(expand_hostlist("a[0-1]-[3-4]"), (Names{"a0-3", "a0-4", "a1-3", "a1-4"}));
  EXPECT_EQ(Hostlist::parse("r[1-4]-n[01-16]-g[1,3]").size(), 4u * 16 * 2);
}

TEST(Hostlist, MixedItemsSuffixesAndShortNames) {
  EXPECT_EQ(expand_hostlist("a,b[1-2],c"), (Names{"a", "b1", "b2", "c"}));
  EXPECT_EQ(expand_hostlist("a"), (Names{"a"}));  // design.md §5: single-character names are valid
  EXPECT_EQ(expand_hostlist("node[1-2]-ib"), (Names{"node1-ib", "node2-ib"}));
  EXPECT_EQ(expand_hostlist("n[1-2]0"), (Names{"n10", "n20"}));
  EXPECT_EQ(expand_hostlist("[1-3]"), (Names{"1", "2", "3"}));
  EXPECT_EQ(expand_hostlist("login.cluster_a"), (Names{"login.cluster_a"}));
  EXPECT_EQ(expand_hostlist(" a , b ,,c,"), (Names{"a", "b", "c"}));
}

TEST(Hostlist, ErrorsNameThePosition) {
  EXPECT_EQ(error_position(""), 0u);
  EXPECT_EQ(error_position("   "), 0u);
  EXPECT_EQ(error_position(",,"), 0u);
  EXPECT_EQ(error_position("node[3-1]"), 5u);
  EXPECT_EQ(error_position("node[1-2"), 4u);
  EXPECT_EQ(error_position("node[100-102"), 4u);
  EXPECT_EQ(error_position("node100-102]"), 11u);
  EXPECT_EQ(error_position("node[]"), 5u);
  EXPECT_EQ(error_position("node[a]"), 5u);
  EXPECT_EQ(error_position("node[1-x]"), 7u);
  EXPECT_EQ(error_position("node[1,,2]"), 7u);
  EXPECT_EQ(error_position("node[1[2]]"), 6u);
  EXPECT_EQ(error_position("node[1 2]"), 6u);
  EXPECT_EQ(error_position("a b"), 2u);
  EXPECT_EQ(error_position("n(1)"), 1u);
  EXPECT_EQ(error_position("n[1-2]x["), 7u);
  EXPECT_EQ(error_position("n[1234567890123456789]"), 2u);
  try {
    (void)Hostlist::parse("node[3-1]");
  } catch (const HostlistError& e) {
    EXPECT_STREQ(e.what(), "invalid hostlist 'node[3-1]': reversed range 3-1 at position 5");
  }
}

TEST(Hostlist, RefusesHugeExpansions) {
  EXPECT_EQ(error_position("n[0-999999999999]"), 0u);
  try {
    (void)Hostlist::parse("a,n[0-9][0-9][0-9]", 1000);
    ADD_FAILURE() << "1001 names accepted with a limit of 1000";
  } catch (const HostlistError& e) {
    EXPECT_EQ(e.position(), 2u) << "the limit applies to the running total";
  }
  EXPECT_EQ(Hostlist::parse("n[0-9][0-9][0-9]", 1000).size(), 1000u);
  EXPECT_THROW((void)Hostlist::parse("n[0-9][0-9][0-9]", 999), HostlistError);
}

TEST(Hostlist, ForEachAndAppendAgree) {
  Hostlist h = Hostlist::parse("x,r[1-2]-n[8-10]");
  Names seen;
  h.for_each([&](std::string_view n) { seen.emplace_back(n); });
  Names appended{"keep"};
  h.append_to(appended);
  ASSERT_EQ(appended.size(), 8u);
  EXPECT_EQ(appended.front(), "keep");
  EXPECT_EQ(Names(appended.begin() + 1, appended.end()), seen);
  EXPECT_EQ(seen[3], "r1-n10");
  EXPECT_EQ(h.size(), 7u);
}

TEST(Hostlist, OutlivesItsSourceAndSurvivesCopies) {
  Hostlist h = [] {
    std::string source = "n[1-2],x";  // short: lives in the string's own small buffer, gone after return
    return Hostlist::parse(source);
  }();
  Hostlist copy = h;
  Hostlist moved = std::move(h);
  for (const Hostlist* l : {&copy, &moved}) {
    Names names;
    l->append_to(names);
    EXPECT_EQ(names, (Names{"n1", "n2", "x"}));
    EXPECT_TRUE(l->contains("x"));
  }
}

TEST(Hostlist, ContainsWithoutExpanding) {
  Hostlist h = Hostlist::parse("node[1-10],n[01-10],rack[1-2]-node[01-04],x[1-2]0,login");
  EXPECT_TRUE(h.contains("node10"));
  EXPECT_TRUE(h.contains("node1"));
  EXPECT_FALSE(h.contains("node01"));
  EXPECT_FALSE(h.contains("node11"));
  EXPECT_TRUE(h.contains("n01"));
  EXPECT_FALSE(h.contains("n1"));
  EXPECT_TRUE(h.contains("rack2-node03"));
  EXPECT_FALSE(h.contains("rack3-node03"));
  EXPECT_TRUE(h.contains("x20"));
  EXPECT_FALSE(h.contains("x2"));
  EXPECT_TRUE(h.contains("login"));
  EXPECT_FALSE(h.contains("logi"));
  EXPECT_FALSE(h.contains(""));
  EXPECT_TRUE(hostlist_contains("h100-193-[001-003]", "h100-193-002"));  // shelper could not (digits in prefix)
  EXPECT_TRUE(hostlist_contains("a1,b[1-2]", "b2"));
  EXPECT_FALSE(hostlist_contains("node[1-", "node1"));
}

TEST(Hostlist, CompressMergesConsecutiveNumbers) {
  EXPECT_EQ(compress_hostlist(Names{"node1", "node2", "node3", "node5"}), "node[1-3,5]");
  EXPECT_EQ(compress_hostlist(Names{"a", "b1", "b2", "c"}), "a,b[1-2],c");
  EXPECT_EQ(compress_hostlist(Names{"n9", "n10"}), "n[9-10]");
  EXPECT_EQ(compress_hostlist(Names{"n09", "n10"}), "n[09-10]");
  EXPECT_EQ(compress_hostlist(Names{"n009", "n10"}), "n[009,10]");  // widths differ: not one range
  EXPECT_EQ(compress_hostlist(Names{"node01-ib", "node02-ib", "node03-eth"}), "node[01-02]-ib,node03-eth");
  EXPECT_EQ(compress_hostlist(Names{"n3", "n1", "n2"}), "n[3,1-2]");  // order is kept, as Slurm does
  EXPECT_EQ(compress_hostlist(Names{"a1", "b1", "a2"}), "a1,b1,a2");
  EXPECT_EQ(compress_hostlist(Names{"n1", "n1"}), "n[1,1]");
  EXPECT_EQ(compress_hostlist(Names{"node7"}), "node7");
  EXPECT_EQ(compress_hostlist(Names{"rack1-node01", "rack1-node02", "rack2-node01"}), "rack1-node[01-02],rack2-node01");
  EXPECT_EQ(compress_hostlist(Names{}), "");
  EXPECT_EQ(compress_hostlist(Names{"n1234567890123456789"}), "n1234567890123456789");
  std::vector<std::string_view> views{"g1", "g2"};
  EXPECT_EQ(compress_hostlist(views), "g[1-2]");
  EXPECT_THROW((void)compress_hostlist(Names{"a b"}), HostlistError);
  EXPECT_THROW((void)compress_hostlist(Names{""}), HostlistError);
  EXPECT_THROW((void)compress_hostlist(Names{"n[1]"}), HostlistError);
}

TEST(Hostlist, CanonicalForm) {
  EXPECT_EQ(canonical_hostlist("node[1-855],node[856-1171],node[1172-1320],node[1322-1470]"), "node[1-1320,1322-1470]");
  EXPECT_EQ(canonical_hostlist("n[001-003],n004"), "n[001-004]");
  EXPECT_EQ(canonical_hostlist("n[1-2][1-2]"), "n[11-12,21-22]");
}

// A random valid hostlist: 1-3 items, each with optional texts and 0-3 groups of 1-3 ranges.
std::string random_hostlist(std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  static const std::string chars = "abcxyz-._0189";
  auto text = [&](int max_len) {
    std::string t;
    int n = pick(max_len + 1);
    for (int i = 0; i < n; ++i) t.push_back(chars[static_cast<size_t>(pick(static_cast<int>(chars.size())))]);
    return t;
  };
  std::string out;
  int items = 1 + pick(3);
  for (int i = 0; i < items; ++i) {
    if (i) out += pick(4) == 0 ? " , " : ",";
    int groups = pick(4);
    std::string item = text(5);
    for (int g = 0; g < groups; ++g) {
      item += '[';
      int ranges = 1 + pick(3);
      for (int r = 0; r < ranges; ++r) {
        if (r) item += ',';
        int width = 1 + pick(3);
        int lo = pick(120);
        int hi = lo + pick(12);
        std::string los = std::to_string(lo);
        while (static_cast<int>(los.size()) < width) los.insert(0, "0");
        item += los;
        if (hi != lo || pick(2)) item += "-" + std::to_string(hi);
      }
      item += ']';
      item += text(3);
    }
    if (item.empty()) item = "h";
    out += item;
  }
  return out;
}

TEST(HostlistProperty, RandomValidListsRoundTrip) {
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 1000; ++iter) {
    std::string text = random_hostlist(rng);
    SCOPED_TRACE(text);
    Hostlist h = Hostlist::parse(text);
    Names names;
    h.append_to(names);
    ASSERT_EQ(names.size(), h.size());
    std::string compressed = compress_hostlist(names);
    ASSERT_EQ(expand_hostlist(compressed), names) << compressed;
    ASSERT_EQ(canonical_hostlist(compressed), compressed) << "canonical form is a fixed point";
    // contains() agrees with the expansion for members and for near misses.
    for (size_t i = 0; i < names.size(); i += 1 + names.size() / 7) {
      ASSERT_TRUE(h.contains(names[i])) << names[i];
      for (const std::string& probe : {names[i] + "0", "0" + names[i], names[i].substr(1)}) {
        bool member = std::find(names.begin(), names.end(), probe) != names.end();
        ASSERT_EQ(h.contains(probe), member) << probe;
      }
    }
  }
}

TEST(HostlistProperty, RandomInvalidListsThrowHostlistError) {
  std::mt19937 rng(777);
  const std::string forbidden = "*/()@!#$%^&=+;:'\"\\|<>?~`{}";
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text = random_hostlist(rng);
    std::string bad = text;
    switch (iter % 3) {
      case 0:  // a character no hostlist may contain, anywhere
        bad.insert(rng() % (bad.size() + 1), 1, forbidden[rng() % forbidden.size()]);
        break;
      case 1: {  // drop a closing bracket: unbalanced
        size_t close = bad.rfind(']');
        if (close == std::string::npos)
          bad += "[";
        else
          bad.erase(close, 1);
        break;
      }
      case 2:  // a reversed range
        bad += ",z[9-3]";
        break;
    }
    SCOPED_TRACE(bad);
    EXPECT_THROW((void)Hostlist::parse(bad), HostlistError);
  }
}

TEST(HostlistProperty, RandomBytesNeverCrash) {
  std::mt19937 rng(99);
  const std::string alphabet = "ab09[]-, .x\t";
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s;
    size_t n = rng() % 16;
    for (size_t i = 0; i < n; ++i) s.push_back(alphabet[rng() % alphabet.size()]);
    try {
      Hostlist h = Hostlist::parse(s, 100000);
      Names names;
      h.append_to(names);
      EXPECT_EQ(names.size(), h.size());
      EXPECT_EQ(expand_hostlist(compress_hostlist(names)), names);
    } catch (const HostlistError& e) {
      EXPECT_LE(e.position(), s.size());
    }
  }
}

}  // namespace
}  // namespace gcm::slurm
