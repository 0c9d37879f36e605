#include "slurm/scontrol.h"

#include <gtest/gtest.h>

namespace gcm::slurm {
namespace {

using Views = std::vector<std::string_view>;

ScontrolRecord split(std::string_view line) {
  ScontrolRecord r;
  split_scontrol_line(line, r);
  return r;
}

TEST(SlurmScontrol, KeysWithPunctuationAndEmptyValues) {
  ScontrolRecord r = split("   Partition=learn AllocNode:Sid=node4014:1839813 CPUs/Task=1 ReqB:S:C:T=0:0:*:* GRES=");
  ASSERT_EQ(r.fields.size(), 5u);
  EXPECT_EQ(r.fields[1], (KeyValue{"AllocNode:Sid", "node4014:1839813"}));
  EXPECT_EQ(r.get("CPUs/Task"), "1");
  EXPECT_EQ(r.get("ReqB:S:C:T"), "0:0:*:*");
  EXPECT_EQ(r.get("GRES"), "");
  EXPECT_EQ(r.get("Nope"), std::nullopt);
  EXPECT_EQ(split("TRES=cpu=8,mem=16G").get("TRES"), "cpu=8,mem=16G") << "split at the first '='";
}

// A word is a key when it is a letter, then letters, digits, '_', ':' or '/', then '='; any other word continues
// the value before it (or is a loose word on a line that has no key yet). Tabs and carriage returns are blanks.
TEST(SlurmScontrol, OnlyLetterLedWordsOfKeyCharactersAreKeys) {
  ScontrolRecord r = split("A=1 1b=2 _c=3 d-e=4 =5 \xc3\xa9=6\tF_9:x/y=7\r");
  ASSERT_EQ(r.fields.size(), 2u);
  EXPECT_EQ(r.fields[0], (KeyValue{"A", "1 1b=2 _c=3 d-e=4 =5 \xc3\xa9=6"}));
  EXPECT_EQ(r.fields[1], (KeyValue{"F_9:x/y", "7"}));
  r = split("1b=2 x=1");
  EXPECT_EQ(r.loose_words, (Views{"1b=2"}));
  EXPECT_EQ(r.get("x"), "1");
  EXPECT_TRUE(split(" \t\r ").fields.empty());
  EXPECT_TRUE(split(" \t\r ").loose_words.empty());
}

TEST(SlurmScontrol, ValuesWithSpacesStayWhole) {
  ScontrolRecord r = split("NodeName=n1 Reason=Not responding [slurm@2024-01-02T03:04:05] State=DOWN+DRAIN");
  EXPECT_EQ(r.get("Reason"), "Not responding [slurm@2024-01-02T03:04:05]");
  EXPECT_EQ(r.get("State"), "DOWN+DRAIN");
  r = split("JobId=1 JobName=my  job name UserId=u(1)");
  EXPECT_EQ(r.get("JobName"), "my  job name") << "inner spacing is kept";
  r = split("   OS=Linux 5.15.0-91-generic #101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023 ");
  EXPECT_EQ(r.get("OS"), "Linux 5.15.0-91-generic #101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023");
  r = split("Command=/bin/train --lr=0.1 --x=y WorkDir=/w");
  EXPECT_EQ(r.get("Command"), "/bin/train --lr=0.1 --x=y");
  EXPECT_EQ(r.get("WorkDir"), "/w");
  r = split("No jobs in the system");
  EXPECT_TRUE(r.fields.empty());
  EXPECT_EQ(r.loose_words, (Views{"No", "jobs", "in", "the", "system"}));
}

TEST(SlurmScontrol, RecordsFromBlocksAndOneLineOutput) {
  const char* blocks =
      "JobId=1 JobName=a\n"
      "   NodeList=n[1-2]\n"
      "     Nodes=n1 GRES=gpu:2(IDX:0-1)\n"
      "     Nodes=n2 GRES=gpu:1(IDX:3)\n"
      "\n"
      "JobId=2 JobName=b\n"
      "   NodeList=n3\n";
  auto records = parse_scontrol_records(blocks);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].get("NodeList"), "n[1-2]");
  EXPECT_EQ(records[0].all("GRES"), (Views{"gpu:2(IDX:0-1)", "gpu:1(IDX:3)"}));
  EXPECT_EQ(records[1].get("JobId"), "2");

  auto lines = parse_scontrol_records("PartitionName=a Nodes=n[1-2]\nPartitionName=b Nodes=n3\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].get("Nodes"), "n3");
}

using OwnedFields = std::vector<std::pair<std::string, std::string>>;

OwnedFields owned(const ScontrolRecord& r) {
  OwnedFields out;
  for (const auto& kv : r.fields) out.emplace_back(kv.key, kv.value);
  return out;
}

TEST(SlurmScontrol, StreamingParserMatchesWholeText) {
  const std::string text =
      "NodeName=n1 Arch=x86_64\n   State=IDLE Reason=a b\n\n\nNodeName=n2 Arch=x86_64\n   State=MIXED\nNodeName=n3";
  ScontrolParser p;
  std::vector<OwnedFields> streamed;
  std::vector<size_t> first_lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    // Each line lives in its own string, overwritten right after feed(): the parser must not keep views into it.
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    const ScontrolRecord* r = p.feed(line);
    line.assign(line.size(), 'X');
    if (r) {
      streamed.push_back(owned(*r));
      first_lines.push_back(p.record_line());
    }
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  if (const ScontrolRecord* r = p.finish()) {
    streamed.push_back(owned(*r));
    first_lines.push_back(p.record_line());
  }
  auto whole = parse_scontrol_records(text);
  ASSERT_EQ(streamed.size(), 3u);
  ASSERT_EQ(whole.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(streamed[i], owned(whole[i])) << i;
  EXPECT_EQ(first_lines, (std::vector<size_t>{1, 5, 7}));
  EXPECT_EQ(whole[0].get("Reason"), "a b");
  EXPECT_EQ(streamed[1].back(), (std::pair<std::string, std::string>{"State", "MIXED"}));
  EXPECT_EQ(p.finish(), nullptr);
}

TEST(SlurmScontrol, ConfigLines) {
  EXPECT_EQ(parse_config_line("AccountingStoragePort   = 6819"), (KeyValue{"AccountingStoragePort", "6819"}));
  EXPECT_EQ(parse_config_line("AcctGatherNodeFreq      = 0 sec"), (KeyValue{"AcctGatherNodeFreq", "0 sec"}));
  EXPECT_EQ(parse_config_line("SlurmctldParameters     = enable_configless,idle_on_node_suspend=1"),
            (KeyValue{"SlurmctldParameters", "enable_configless,idle_on_node_suspend=1"}));
  EXPECT_EQ(parse_config_line("Configuration data as of 2023-08-02T15:34:19"), std::nullopt);
  EXPECT_EQ(parse_config_line("=x"), std::nullopt);
  auto all = parse_scontrol_config("Configuration data as of x\nA = 1\n\nSection:\nB=\n");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1], (KeyValue{"B", ""}));
}

}  // namespace
}  // namespace gcm::slurm
