// The README's Records table and sink list are generated from the registries the binary is built with (this test
// links every source file, so every schema and sink has registered itself). When a record type or a sink is added,
// renamed or re-described, this test fails naming the first line that differs and prints the whole block to paste
// between the README's marker comments, so the README cannot drift from what `gcm schemas` and `--sink` accept.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/schema.h"
#include "sinks/sink.h"

namespace gcm {
namespace {

// A table cell must not end the cell early.
std::string cell(std::string text) {
  for (size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
  return text;
}

// One row per schema, sorted by name: registration order follows link order, which the README must not depend on.
std::string records_block() {
  std::vector<const Schema*> schemas = schema_registry();
  std::sort(schemas.begin(), schemas.end(), [](const Schema* a, const Schema* b) { return a->name < b->name; });
  std::string out = "| Record | Kind | Description |\n|---|---|---|\n";
  for (const Schema* s : schemas) {
    out += "| `" + s->name + "` | " + to_string(s->data_type) + " | " + cell(s->description) + " |\n";
  }
  return out;
}

// Sinks a test registers for itself are named test_* (tests/unit/sinks/registry_test.cc) and are not part of gcm.
bool is_test_sink(const std::string& name) { return name.rfind("test_", 0) == 0; }

// sink_registry() is a std::map, so the names come sorted.
std::string sinks_block() {
  std::string out;
  for (const auto& [name, factory] : sink_registry()) {
    if (!is_test_sink(name)) out += "- `" + name + "`: " + factory.summary + "\n";
  }
  return out;
}

std::string read_readme() {
  std::ifstream in(std::string(GCM_SOURCE_DIR) + "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text between `<!-- generated: NAME -->` and the next `<!-- end generated -->`, without the marker lines.
std::string generated_block(const std::string& readme, const std::string& name) {
  const std::string begin = "<!-- generated: " + name + " -->\n";
  size_t start = readme.find(begin);
  if (start == std::string::npos) return "(no '" + begin.substr(0, begin.size() - 1) + "' line in README.md)\n";
  start += begin.size();
  size_t end = readme.find("<!-- end generated -->", start);
  if (end == std::string::npos) return "(no '<!-- end generated -->' after the " + name + " block)\n";
  return readme.substr(start, end - start);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Empty when equal, else the first differing line, numbered from the block's first line.
std::string first_difference(const std::string& in_readme, const std::string& expected) {
  std::vector<std::string> have = lines_of(in_readme), want = lines_of(expected);
  for (size_t i = 0; i < std::max(have.size(), want.size()); ++i) {
    std::string h = i < have.size() ? have[i] : "(end of block)";
    std::string w = i < want.size() ? want[i] : "(end of block)";
    if (h != w) return "line " + std::to_string(i + 1) + " of the block:\n  README: " + h + "\n  binary: " + w;
  }
  return "";
}

void expect_block(const std::string& name, const std::string& expected) {
  std::string in_readme = generated_block(read_readme(), name);
  std::string diff = first_difference(in_readme, expected);
  EXPECT_EQ(diff, "") << "README.md's '" << name << "' block differs from the binary's registry at " << diff
                      << "\nReplace the block with:\n<!-- generated: " << name << " -->\n"
                      << expected << "<!-- end generated -->";
}

TEST(Readme, RecordsTableIsTheSchemaRegistry) {
  ASSERT_FALSE(schema_registry().empty());
  expect_block("records", records_block());
}

TEST(Readme, SinkListIsTheSinkRegistry) {
  ASSERT_FALSE(sink_registry().empty());
  expect_block("sinks", sinks_block());
}

// The comparison itself: a block that lost a row, or changed one, is reported at that row.
TEST(Readme, FirstDifferenceNamesTheLine) {
  EXPECT_EQ(first_difference("a\nb\n", "a\nb\n"), "");
  EXPECT_EQ(first_difference("a\nx\n", "a\nb\n"), "line 2 of the block:\n  README: x\n  binary: b");
  EXPECT_EQ(first_difference("a\n", "a\nb\n"), "line 2 of the block:\n  README: (end of block)\n  binary: b");
  EXPECT_EQ(cell("a|b"), "a\\|b");
  EXPECT_TRUE(is_test_sink("test_counting"));
  EXPECT_FALSE(is_test_sink("telemetry"));
}

}  // namespace
}  // namespace gcm
