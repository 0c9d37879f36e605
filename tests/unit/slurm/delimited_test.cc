#include "slurm/delimited.h"

#include <gtest/gtest.h>

#include "slurm/sacct_lines.h"

namespace gcm::slurm {
namespace {

using Views = std::vector<std::string_view>;

Views fields_of(const DelimitedRow& r) { return Views(r.fields.begin(), r.fields.end()); }

TEST(SlurmDelimited, SplitFields) {
  Views out;
  split_fields("a|b||c", "|", out);
  EXPECT_EQ(out, (Views{"a", "b", "", "c"}));
  split_fields("a|#b|#|#c|#", "|#", out);
  EXPECT_EQ(out, (Views{"a", "b", "", "c", ""}));
  split_fields("", "|", out);
  EXPECT_EQ(out, (Views{""}));
  split_fields("  PID  JOBID\tSTEPID ", "", out);
  EXPECT_EQ(out, (Views{"PID", "JOBID", "STEPID"}));
  split_fields("   ", "", out);
  EXPECT_TRUE(out.empty());
  split_fields("a|b|", "|#", out);
  EXPECT_EQ(out, (Views{"a|b|"}));
}

TEST(SlurmDelimited, HeaderRowsTrimAndLineNumbers) {
  DelimitedParser p({});
  EXPECT_EQ(p.feed("NAME |STATE | CPUS"), nullptr);
  ASSERT_TRUE(p.has_header());
  EXPECT_EQ(p.header().names(), (std::vector<std::string>{"NAME", "STATE", "CPUS"}));
  EXPECT_EQ(p.feed(""), nullptr);
  const DelimitedRow* r = p.feed(" node1 | idle |8\r");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(fields_of(*r), (Views{"node1", "idle", "8"}));
  EXPECT_EQ(r->line_number, 3u);
  EXPECT_EQ((*r)[*p.header().first("CPUS")], "8");
  EXPECT_EQ((*r)[7], "");
  EXPECT_FALSE(r->has(3));
  EXPECT_EQ(p.rows(), 1u);
}

TEST(SlurmDelimited, LengthMismatchPolicies) {
  const char* text = "A|B|C\n1|2|3\n1|2\n1|2|3|4\n4|5|6\n";
  DelimitedOptions strict;
  try {
    parse_delimited(text, strict, [](const DelimitedHeader&, const DelimitedRow&) {});
    FAIL() << "no error";
  } catch (const DelimitedError& e) {
    EXPECT_EQ(e.line(), 3u);
    EXPECT_STREQ(e.what(), "line 3: row has 2 fields, the header has 3");
  }

  DelimitedOptions skip;
  skip.length_mismatch = RowLengthPolicy::Skip;
  std::vector<std::string> firsts;
  DelimitedParser ps(skip);
  for_each_line(text, [&](std::string_view l) {
    if (auto* r = ps.feed(l)) firsts.emplace_back((*r)[0]);
  });
  EXPECT_EQ(firsts, (std::vector<std::string>{"1", "4"}));
  EXPECT_EQ(ps.skipped_rows(), 2u);
  EXPECT_EQ(ps.mismatched_rows(), 2u);

  DelimitedOptions zip;
  zip.length_mismatch = RowLengthPolicy::Zip;
  std::vector<Views> rows;
  parse_delimited(text, zip, [&](const DelimitedHeader&, const DelimitedRow& r) { rows.push_back(fields_of(r)); });
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1], (Views{"1", "2"}));
  EXPECT_EQ(rows[2], (Views{"1", "2", "3"})) << "extra fields are dropped";

  DelimitedOptions reference;
  reference.length_mismatch = RowLengthPolicy::DropExtraSkipShort;
  rows.clear();
  DelimitedParser pr(reference);
  for_each_line(text, [&](std::string_view l) {
    if (auto* r = pr.feed(l)) rows.push_back(fields_of(*r));
  });
  EXPECT_EQ(rows, (std::vector<Views>{{"1", "2", "3"}, {"1", "2", "3"}, {"4", "5", "6"}}));
  EXPECT_EQ(pr.skipped_rows(), 1u);
  EXPECT_EQ(pr.mismatched_rows(), 2u);
}

TEST(SlurmDelimited, SqueueStyleWithoutHeaderAndTrailingDelimiter) {
  DelimitedOptions o;
  o.delimiter = "|#";
  o.header = false;
  o.columns = {"JOBID", "NAME", "STATE"};
  o.trailing_delimiter = true;
  std::vector<Views> rows;
  size_t n =
      parse_delimited("1|#my job|#RUNNING|#\n2|#x|#|#\n", o, [&](const DelimitedHeader& h, const DelimitedRow& r) {
        EXPECT_EQ(h.size(), 3u);
        rows.push_back(fields_of(r));
      });
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(rows[0], (Views{"1", "my job", "RUNNING"}));
  EXPECT_EQ(rows[1], (Views{"2", "x", ""}));
}

TEST(SlurmDelimited, TrimLineWithoutTrimmingValues) {
  DelimitedOptions o;
  o.trim_values = false;
  o.trim_line = true;
  std::vector<Views> rows;
  parse_delimited("A|B\n  x | y  \n", o,
                  [&](const DelimitedHeader&, const DelimitedRow& r) { rows.push_back(fields_of(r)); });
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (Views{"x ", " y"}));
}

TEST(SlurmDelimited, ReferenceColumnResolution) {
  DelimitedHeader h({"PARTITION", "STATE", "USER", "JOBID", "PARTITION", "STATE", "USER", "JOBID"});
  EXPECT_EQ(h.reference_index("PARTITION"), 0u);
  EXPECT_EQ(h.reference_index("USER"), 2u) << "the first USER (root, not root(0))";
  EXPECT_EQ(h.reference_index("STATE"), 5u) << "the last STATE (the long form)";
  EXPECT_EQ(h.reference_index("JOBID"), 3u);
  EXPECT_EQ(h.reference_index("JOBID_RAW"), 7u) << "a repeated JOBID is the reference's JOBID_RAW";
  EXPECT_EQ(h.reference_index("MISSING"), std::nullopt);
  EXPECT_EQ(DelimitedHeader({"JOBID"}).reference_index("JOBID_RAW"), std::nullopt);
  EXPECT_EQ(h.last("USER"), 6u);
}

TEST(SlurmSacctLines, JoinsBrokenRecords) {
  SacctLineRepair repair("|");
  std::vector<std::string> out;
  for (std::string_view l : {"A|B|C", "1|2|3", "1|first", "second|3", "x", "y", "z|2|3", "4|5|6"}) {
    if (auto logical = repair.feed(l)) out.emplace_back(*logical);
  }
  // As in the reference, a line with the header's count passes as it is even while a record is open: z|2|3 is
  // returned and x, y stay open.
  EXPECT_EQ(out, (std::vector<std::string>{"A|B|C", "1|2|3", "1|first\\nsecond|3", "z|2|3", "4|5|6"}));
  EXPECT_TRUE(repair.pending());
}

TEST(SlurmSacctLines, OverlongJoinFailsAndOpenRecordIsReported) {
  SacctLineRepair repair("|#");
  EXPECT_EQ(repair.feed("A|#B|#C|#D"), "A|#B|#C|#D");
  EXPECT_EQ(repair.feed("1|#2|#3"), std::nullopt);
  EXPECT_TRUE(repair.pending());
  try {
    repair.feed("4|#5|#6");
    FAIL() << "2 + 2 delimiters exceed the header's 3";
  } catch (const DelimitedError& e) {
    EXPECT_EQ(e.line(), 3u);
    EXPECT_NE(std::string(e.what()).find("more delimiters than expected"), std::string::npos);
  }
}

}  // namespace
}  // namespace gcm::slurm
