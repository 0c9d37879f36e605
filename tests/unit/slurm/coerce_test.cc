// Scalar coercions, memory sizes, TRES and durations: the reference's §1.9 rules and the design.md §5 fixes.
#include <gtest/gtest.h>

#include <cmath>

#include "slurm/coerce.h"
#include "slurm/duration.h"
#include "slurm/memory.h"
#include "slurm/tres.h"

namespace gcm::slurm {
namespace {

TEST(SlurmCoerce, NullLikeValues) {
  for (const char* v : {"", "N/A", "Unknown", "(null)", "None", "  N/A "}) EXPECT_TRUE(is_null_like(v)) << v;
  for (const char* v : {"0", "none", "NONE", "null", "Unknown2"}) EXPECT_FALSE(is_null_like(v)) << v;
}

TEST(SlurmCoerce, MaybeIntFollowsPythonInt) {
  EXPECT_EQ(maybe_int("5"), 5);
  EXPECT_EQ(maybe_int(" 5 "), 5);
  EXPECT_EQ(maybe_int("+5"), 5);
  EXPECT_EQ(maybe_int("-12"), -12);
  EXPECT_EQ(maybe_int("1_000"), 1000);
  EXPECT_EQ(maybe_int("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(maybe_int("-9223372036854775808"), INT64_MIN);
  for (const char* v :
       {"N/A", "0 sec", "", "UNLIMITED", "5.0", "0x10", "1__0", "_1", "1_", "+-1", "9223372036854775808"})
    EXPECT_EQ(maybe_int(v), std::nullopt) << v;
}

TEST(SlurmCoerce, MaybeFloatFollowsPythonFloat) {
  EXPECT_DOUBLE_EQ(*maybe_float("0.00017607258637"), 0.00017607258637);
  EXPECT_DOUBLE_EQ(*maybe_float("1e3"), 1000.0);
  EXPECT_DOUBLE_EQ(*maybe_float(" +1.5 "), 1.5);
  EXPECT_DOUBLE_EQ(*maybe_float(".5"), 0.5);
  EXPECT_DOUBLE_EQ(*maybe_float("5."), 5.0);
  EXPECT_DOUBLE_EQ(*maybe_float("1_0.5"), 10.5);
  EXPECT_TRUE(std::isinf(*maybe_float("inf")));
  EXPECT_TRUE(std::isinf(*maybe_float("1e999")));
  EXPECT_TRUE(std::isnan(*maybe_float(" nan ")));
  for (const char* v : {"N/A", "", "+-1", "0x1p3", "nan(1)", "1.2.3", "5 sec"})
    EXPECT_EQ(maybe_float(v), std::nullopt) << v;
}

TEST(SlurmCoerce, StrictIntegers) {
  EXPECT_EQ(strict_int("7"), 7);
  EXPECT_THROW(strict_int("seven"), ParseError);
  EXPECT_EQ(non_negative_int("0"), 0);
  EXPECT_THROW(non_negative_int("-1"), ParseError);
  EXPECT_EQ(parse_scontrol_maxnodes("UNLIMITED"), -1);
  EXPECT_EQ(parse_scontrol_maxnodes(""), -1);
  EXPECT_EQ(parse_scontrol_maxnodes("64"), 64);
  EXPECT_EQ(parse_scontrol_maxnodes("-5"), -1);
  EXPECT_THROW(parse_scontrol_maxnodes("99999999999999999999"), ParseError);
}

TEST(SlurmCoerce, CpuStatesJobIdsAbbreviations) {
  CpuStates c = parse_cpu_states("80/1/2/83");
  EXPECT_EQ(c.allocated, 80);
  EXPECT_EQ(c.idle, 1);
  EXPECT_EQ(c.other, 2);
  EXPECT_EQ(c.total, 83);
  EXPECT_THROW(parse_cpu_states("80/0/0"), ParseError);
  EXPECT_THROW(parse_cpu_states("80/0/0/80/1"), ParseError);
  EXPECT_THROW(parse_cpu_states("a/0/0/80"), ParseError);
  EXPECT_EQ(parse_job_ids(""), std::vector<std::string_view>{});
  EXPECT_EQ(parse_job_ids("1,2,,3"), (std::vector<std::string_view>{"1", "2", "", "3"}));
  EXPECT_DOUBLE_EQ(parse_abbreviated_float("1.5K"), 1500.0);
  EXPECT_DOUBLE_EQ(parse_abbreviated_float("2M"), 2e6);
  EXPECT_DOUBLE_EQ(parse_abbreviated_float("3G"), 3e9);
  EXPECT_DOUBLE_EQ(parse_abbreviated_float("42"), 42.0);
  EXPECT_THROW(parse_abbreviated_float("4T"), ParseError);
  EXPECT_THROW(parse_abbreviated_float(""), ParseError);
}

TEST(SlurmMemory, ReferenceExamples) {
  EXPECT_EQ(convert_memory_to_mb(""), 0);
  EXPECT_EQ(convert_memory_to_mb("0"), 0);
  EXPECT_EQ(convert_memory_to_mb("0.125G"), 125);
  EXPECT_EQ(convert_memory_to_mb("60G"), 60000);
  EXPECT_EQ(convert_memory_to_mb("10.5G"), 10500);
  EXPECT_EQ(convert_memory_to_mb("1T"), 1000000);
  EXPECT_EQ(convert_memory_to_mb("1280.50G"), 1280500);
  EXPECT_EQ(convert_memory_to_mb("32500000M"), 32500000);
  EXPECT_EQ(convert_memory_to_mb("0.1P"), 100000000);
  EXPECT_EQ(convert_memory_to_mb("2.5T"), 2500000);
  EXPECT_EQ(convert_memory_to_mb("4.35G"), 4350) << "float truncation as in Python";
  EXPECT_EQ(convert_memory_to_mb("32500000123"), 32500) << "bytes";
  EXPECT_EQ(convert_memory_to_mb("999999"), 0);
}

TEST(SlurmMemory, KiloSuffixIsAFix) {
  EXPECT_EQ(convert_memory_to_mb("1500K"), 1);  // design.md §5: the reference raised ValueError
  EXPECT_EQ(convert_memory_to_mb("999K"), 0);
  EXPECT_EQ(convert_memory_to_mb("2048000K"), 2048);
}

TEST(SlurmMemory, Errors) {
  for (const char* v : {"16g", "16X", "G", "abcG", "1e400G", "99999999999999P"})
    EXPECT_THROW(convert_memory_to_mb(v), ParseError) << v;
}

// GCM's 2026 MIN_MEMORY (maybe_parse_memory_to_bytes): decimal bytes; a bare number is megabytes; no value is null.
TEST(SlurmMemory, BytesAsTheNewerReferenceWritesThem) {
  EXPECT_EQ(memory_to_bytes("500M"), int64_t{500'000'000});
  EXPECT_EQ(memory_to_bytes("60G"), int64_t{60'000'000'000});
  EXPECT_EQ(memory_to_bytes("10.5G"), int64_t{10'500'000'000});
  EXPECT_EQ(memory_to_bytes("0.125G"), int64_t{125'000'000});
  EXPECT_EQ(memory_to_bytes("1T"), int64_t{1'000'000'000'000});
  EXPECT_EQ(memory_to_bytes("2P"), int64_t{2'000'000'000'000'000});
  EXPECT_EQ(memory_to_bytes("1500K"), int64_t{1'500'000});
  EXPECT_EQ(memory_to_bytes("4000"), int64_t{4'000'000'000}) << "a bare number is MB";
  EXPECT_EQ(memory_to_bytes("0"), int64_t{0});
  for (const char* none : {"", "N/A", "(null)"}) EXPECT_EQ(memory_to_bytes(none), std::nullopt) << none;
  for (const char* v : {"16g", "16X", "G", "abcG", "1e400G", "99999P", "1.5"})
    EXPECT_THROW(memory_to_bytes(v), ParseError) << v;
}

TEST(SlurmTres, ValueByKey) {
  const char* t = "cpu=5200,mem=32500000M,node=65,billing=17487,gres/gpu=520";
  EXPECT_EQ(tres_value(t, "cpu"), 5200);
  EXPECT_EQ(tres_value(t, "mem"), 32500000);
  EXPECT_EQ(tres_value(t, "node"), 65);
  EXPECT_EQ(tres_value(t, "billing"), 17487);
  EXPECT_EQ(tres_value(t, "gres/gpu"), 520);
  EXPECT_EQ(tres_value(t, "gres/gp"), 0) << "exact key match only";
  EXPECT_EQ(tres_value("", "cpu"), 0);
  EXPECT_EQ(tres_value("(null)", "cpu"), 0);
  EXPECT_EQ(tres_value("cpu=1,mem=0.125G,gres/gpu=16", "mem"), 125);
  EXPECT_EQ(tres_value("cpu=1,cpu=2", "cpu"), 2) << "a repeated key keeps its last value";
  EXPECT_THROW(tres_value("cpu=1,bogus", "cpu"), ParseError) << "every item must be key=value";
  EXPECT_THROW(tres_value("cpu=1=2", "node"), ParseError);
  EXPECT_THROW(tres_value("N/A", "cpu"), ParseError) << "the reference only treats '' and '(null)' as empty";
  EXPECT_THROW(tres_value("cpu=0.5", "cpu"), ParseError);
}

TEST(SlurmTres, Entries) {
  auto e = parse_tres_entries("cpu=8,mem=16G,node=1,billing=8,gres/gpu=2");
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[1].key, "mem");
  EXPECT_EQ(e[1].value, "16G");
  EXPECT_EQ(tres_entry_number(e[1]), 16000);
  EXPECT_EQ(tres_entry_number(e[4]), 2);
  EXPECT_EQ(tres_entry_number({"gres/gpumem", "80G"}), 80000);
  EXPECT_THROW(tres_entry_number({"billing", "x"}), ParseError);
  EXPECT_TRUE(parse_tres_entries("N/A").empty());
  EXPECT_TRUE(parse_tres_entries("(null)").empty());
  EXPECT_THROW(parse_tres_entries("cpu=1,,node=2"), ParseError);
}

TEST(SlurmDuration, ReferenceElapsed) {
  EXPECT_EQ(elapsed_string_to_seconds("1-02:03:04"), 93784);
  EXPECT_EQ(elapsed_string_to_seconds("02:03:04"), 7384);
  EXPECT_EQ(elapsed_string_to_seconds("03:04"), 184);
  EXPECT_EQ(elapsed_string_to_seconds("14-00:00:00"), 14 * 86400);
  EXPECT_EQ(elapsed_string_to_seconds("5"), 5);
  EXPECT_EQ(elapsed_string_to_seconds("00:00:00"), 0);
  for (const char* v : {"", "UNLIMITED", "01:02.5", "1:2:3:4:5", ":5", "1-", "a:00"})
    EXPECT_THROW(elapsed_string_to_seconds(v), ParseError) << v;
}

TEST(SlurmDuration, WordsFractionsAndNulls) {
  using K = Duration::Kind;
  EXPECT_EQ(parse_duration("UNLIMITED")->kind, K::Unlimited);
  EXPECT_EQ(parse_duration("INVALID")->kind, K::Invalid);
  EXPECT_EQ(parse_duration("Partition_Limit")->kind, K::PartitionLimit);
  EXPECT_EQ(parse_duration("unlimited")->kind, K::Unlimited);
  EXPECT_EQ(parse_duration("01:02.345")->milliseconds, 62345);
  EXPECT_EQ(parse_duration("00:00.005")->milliseconds, 5);
  EXPECT_EQ(parse_duration("1:00:00.1")->milliseconds, 3600100);
  EXPECT_EQ(parse_duration("00:01.23456")->milliseconds, 1234) << "beyond milliseconds is truncated";
  EXPECT_EQ(parse_duration("2-17:56:34")->seconds(), 2 * 86400 + 17 * 3600 + 56 * 60 + 34);
  EXPECT_TRUE(parse_duration("3-00:00:00")->finite());
  EXPECT_EQ(parse_duration("N/A"), std::nullopt);
  EXPECT_EQ(parse_duration(""), std::nullopt);
  for (const char* v : {"1.5:00", "00:01.", "00:01.x", "soon", "1-2-3-4-5", "99999999999999999999"})
    EXPECT_THROW(parse_duration(v), ParseError) << v;
}

}  // namespace
}  // namespace gcm::slurm
