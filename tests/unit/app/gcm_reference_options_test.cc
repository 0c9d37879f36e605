// Every option GCM declares, read from the reference (../shared/spec/gcm-reference.md), must be an option of the
// same command here, under every name GCM gives it, and the names GCM gives one option must be one option here: a
// prolog line written for GCM must mean the same thing to gcm. The commands and checks are walked from the binary's
// registries (visit_gcm_command_lines, visit_health_checks_command_lines), built as the binary builds them to run.
// What GCM has and we lack fails, and so does a short name that reaches another option than GCM's (issue 55:
// check-path-access-by-user's -o is --operation in GCM, not --sink-opt). Options we add beyond GCM's are not checked.
//
// The reference is prose, so the reader below knows its conventions and is strict about them: an option is a
// backticked name (`-o/--operation`: names of one option split by '/'), declared on an "Options:" line, in the first
// column of a table headed "Option", in a subcommand's usage (`new [-s/--start ...]`) or in §3.2's list of the
// options every check has; a heading or section it cannot place fails the test, and so do fewer commands, checks or
// options than the reference holds, so that a change of format cannot make it check nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "health/health_checks_command.h"
#include "sacct/fsacct.h"

namespace gcm {
namespace {

const std::string kReferencePath = std::string(GCM_SOURCE_DIR) + "/../shared/spec/gcm-reference.md";

using Path = std::vector<std::string>;

std::string joined(const Path& p, const std::string& program) {
  std::string s = program;
  for (const auto& w : p) s += " " + w;
  return s;
}

// The names of one option GCM declares ({"-o", "--operation"}), and the reference line that declares it.
struct Declared {
  std::set<std::string> names;
  int line = 0;
};
using Declarations = std::vector<Declared>;

// A section may name one option twice (slurm_monitor: the shared options, "with `--interval` 300"): one option.
void add_declared(Declarations& list, const Declared& d) {
  for (auto& have : list)
    for (const auto& n : d.names)
      if (have.names.count(n)) {
        have.names.insert(d.names.begin(), d.names.end());
        return;
      }
  list.push_back(d);
}

// A command's own options, then the shared ones (the collectors' §1.3, the checks' §3.2) less the names its own
// options took: GCM declares a command's own options after the shared ones and click gives a name declared twice
// to the option declared last.
Declarations layered(const Declarations& own, const Declarations& shared) {
  Declarations out = own;
  std::set<std::string> taken;
  for (const auto& d : own) taken.insert(d.names.begin(), d.names.end());
  for (const auto& d : shared) {
    Declared left{{}, d.line};
    for (const auto& n : d.names)
      if (!taken.count(n)) left.names.insert(n);
    if (!left.names.empty()) add_declared(out, left);
  }
  return out;
}

struct Span {
  std::string text;
  size_t begin = 0, end = 0;  // the offsets of the opening backtick and just after the closing one
};

std::vector<Span> spans_of(const std::string& line) {
  std::vector<Span> out;
  for (size_t at = line.find('`'); at != std::string::npos;) {
    size_t close = line.find('`', at + 1);
    if (close == std::string::npos) break;
    out.push_back({line.substr(at + 1, close - at - 1), at, close + 1});
    at = line.find('`', close + 1);
  }
  return out;
}

// The option names a span declares ("-o/--operation", "--timeout INT" -> --timeout, "-gpu/--gpu-devices"); empty
// when it is not a declaration (a value, a command, a default such as `-mca coll_hcoll_enable 0`).
std::vector<std::string> option_names(const std::string& span) {
  static const std::regex kName(R"(--?[A-Za-z][A-Za-z0-9_-]*)");
  std::string first = span.substr(0, span.find(' '));
  std::vector<std::string> names;
  std::stringstream parts(first);
  for (std::string part; std::getline(parts, part, '/');) {
    if (!std::regex_match(part, kName)) return {};
    names.push_back(part);
  }
  if (!first.empty() && first.back() == '/') return {};
  return names;
}

bool is_short_name(const std::string& n) { return n.size() == 2 && n[0] == '-' && n[1] != '-'; }
bool is_long_name(const std::string& n) { return n.size() > 2 && n[0] == '-' && n[1] == '-'; }

// The options an "Options:" text or a table's first cell declares. Each option span is one option, but for two
// conventions of the reference: "(alias `--b`)" names the option before it again, and a text of exactly two spans,
// a short name then a long one, separated by a comma (§1.1's "`-d`, `--detach`", §1.3's "`-o`, `--sink-opt`"), is
// one option written in two spans. A span right after "no " (sacct_publish: "no `--interval` and no `--once`") is an
// option the command lacks: it goes to `absent`.
Declarations declared_in(const std::string& text, int line, std::set<std::string>* absent = nullptr) {
  std::vector<std::pair<Span, std::vector<std::string>>> found;
  for (const Span& s : spans_of(text))
    if (auto names = option_names(s.text); !names.empty()) found.push_back({s, names});
  Declarations out;
  if (found.size() == 2 && found[0].second.size() == 1 && found[1].second.size() == 1 &&
      is_short_name(found[0].second[0]) && is_long_name(found[1].second[0]) &&
      text.substr(found[0].first.end, found[1].first.begin - found[0].first.end) == ", ") {
    out.push_back({{found[0].second[0], found[1].second[0]}, line});
    return out;
  }
  size_t previous_end = 0;
  for (const auto& [span, names] : found) {
    std::string before = text.substr(previous_end, span.begin - previous_end);
    previous_end = span.end;
    if (absent && before.size() >= 3 && before.compare(before.size() - 3, 3, "no ") == 0) {
      absent->insert(names.begin(), names.end());
      continue;
    }
    if (!out.empty() && before.find("(alias ") != std::string::npos) {
      out.back().names.insert(names.begin(), names.end());
      continue;
    }
    out.push_back({std::set<std::string>(names.begin(), names.end()), line});
  }
  return out;
}

// A table row's cells, trimmed ("\|" inside a cell is no border).
std::vector<std::string> cells_of(const std::string& row) {
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '|' && row[i - 1] != '\\') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  for (auto& c : cells) {
    size_t b = c.find_first_not_of(' '), e = c.find_last_not_of(' ');
    c = b == std::string::npos ? "" : c.substr(b, e - b + 1);
  }
  return cells;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// What the reference declares, by command path ({} is the program itself).
struct Reference {
  std::set<std::string> gcm_commands;    // §1.2
  std::set<std::string> gcm_collectors;  // §1.2 rows of data type LOG or METRIC: they take the shared options
  Declarations gcm_shared;               // §1.3
  std::map<Path, Declarations> gcm;      // each command's own
  std::map<Path, std::set<std::string>> gcm_absent;  // shared options a command lacks ("no `--once`")
  std::set<Path> gcm_lists_all;  // a section whose table lists every option, the shared ones too (nvml_monitor)

  std::set<Path> health_tree;     // §3.7
  Declarations health_common;     // §3.2, --timeout aside
  Declarations health_timeout;    // §3.2's `--timeout`
  std::set<Path> health_without_timeout;
  std::map<Path, Declarations> health;  // each check's own; {} the root

  std::vector<std::string> problems;  // what the reader could not place

  // Every option the command at `path` has in GCM.
  Declarations gcm_expected(const Path& path) const {
    Declarations own = gcm.count(path) ? gcm.at(path) : Declarations{};
    if (path.size() != 1 || !gcm_collectors.count(path[0]) || gcm_lists_all.count(path)) return own;
    Declarations shared;
    std::set<std::string> absent = gcm_absent.count(path) ? gcm_absent.at(path) : std::set<std::string>{};
    for (const auto& d : gcm_shared) {
      bool lacked = false;
      for (const auto& n : d.names) lacked = lacked || absent.count(n);
      if (!lacked) shared.push_back(d);
    }
    return layered(own, shared);
  }
  Declarations health_expected(const Path& path) const {
    Declarations own = health.count(path) ? health.at(path) : Declarations{};
    if (path.empty()) return own;
    Declarations common = health_common;
    if (!health_without_timeout.count(path)) common.insert(common.end(), health_timeout.begin(), health_timeout.end());
    return layered(own, common);
  }
};

class ReferenceReader {
 public:
  explicit ReferenceReader(Reference& ref) : ref_(ref) {}

  void read(const std::vector<std::string>& lines) {
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& line = lines[i];
      int number = static_cast<int>(i) + 1;
      bool header = starts_with(line, "|") && i + 1 < lines.size() && starts_with(lines[i + 1], "|---");
      if (starts_with(line, "## ")) {
        part(line);
      } else if (starts_with(line, "### ")) {
        section(line);
      } else if (starts_with(line, "#### ")) {
        subsection(line, number);
      } else if (starts_with(line, "|---")) {
        continue;
      } else if (header) {
        option_table_ = !cells_of(line).empty() && cells_of(line)[0] == "Option";
        continue;
      } else {
        body(line, number);
      }
    }
    // §3.2 comes before the tree of §3.7.
    for (const auto& p : ref_.health_without_timeout)
      if (!ref_.health_tree.count(p))
        ref_.problems.push_back("line " + std::to_string(without_timeout_line_) + ": '" + joined(p, "") +
                                "' is no check of the tree");
  }

 private:
  enum class Kind { None, GcmCommands, GcmTable, GcmShared, HealthCommon, HealthTree, HealthChecks };

  void part(const std::string& line) {
    kind_ = Kind::None;
    current_.clear();
    group_.clear();
    option_table_ = false;
    gcm_part_ = starts_with(line, "## 1.") || starts_with(line, "## 5.");
    health_part_ = starts_with(line, "## 3.");
    if (starts_with(line, "## 5.")) {  // nvml_monitor in depth
      section_commands(line);
      kind_ = Kind::GcmCommands;
    }
  }

  // The §1.2 commands a heading names in backticks.
  void section_commands(const std::string& heading) {
    current_.clear();
    for (const Span& s : spans_of(heading))
      if (ref_.gcm_commands.count(s.text)) current_.push_back({s.text});
  }

  void section(const std::string& line) {
    option_table_ = false;
    group_.clear();
    if (gcm_part_ && starts_with(line, "### Options")) return;  // nvml_monitor's options, in §5
    kind_ = Kind::None;
    current_.clear();
    if (gcm_part_) {
      if (starts_with(line, "### 1.1 ")) {
        kind_ = Kind::GcmCommands;
        current_ = {{}};
      } else if (starts_with(line, "### 1.2 ")) {
        kind_ = Kind::GcmTable;
      } else if (starts_with(line, "### 1.3 ")) {
        kind_ = Kind::GcmShared;
      } else if (starts_with(line, "### 1.")) {
        section_commands(line);
        if (!current_.empty()) kind_ = Kind::GcmCommands;
      }
    } else if (health_part_) {
      if (starts_with(line, "### 3.1 ")) {
        kind_ = Kind::HealthChecks;
        current_ = {{}};
      } else if (starts_with(line, "### 3.2 ")) {
        kind_ = Kind::HealthCommon;
      } else if (starts_with(line, "### 3.7 ")) {
        kind_ = Kind::HealthTree;
      } else if (starts_with(line, "### 3.8 ")) {
        kind_ = Kind::HealthChecks;
      }
    }
  }

  // §3.8: "#### check-nvidia-smi (NVML; ...)", "#### check-dcgmi (group)", "#### check-ipmitool check-sel",
  // "#### cuda memtest"; other headings there (environment variables, prolog integration) name no check.
  void subsection(const std::string& line, int number) {
    option_table_ = false;
    current_.clear();
    group_.clear();
    if (kind_ != Kind::HealthChecks) {
      if (kind_ == Kind::GcmCommands) kind_ = Kind::None;  // §1.1's "Config precedence and layout"
      return;
    }
    std::string title = line.substr(5);
    title = title.substr(0, title.find(" ("));
    std::vector<std::string> words;
    std::stringstream in(title);
    for (std::string w; in >> w;) words.push_back(w);
    if (words.size() == 2 && ref_.health_tree.count(words)) {
      current_ = {words};
    } else if (words.size() == 1 && ref_.health_tree.count(words)) {
      current_ = {words};
    } else if (words.size() == 1 && is_health_group(words[0])) {
      group_ = words[0];
    } else if (!words.empty() && (starts_with(words[0], "check-") || words[0] == "cuda")) {
      ref_.problems.push_back("line " + std::to_string(number) + ": heading '" + title +
                              "' names no check of §3.7's tree");
    }
  }

  bool is_health_group(const std::string& name) const {
    for (const auto& p : ref_.health_tree)
      if (p.size() == 2 && p[0] == name) return true;
    return false;
  }

  void body(const std::string& line, int number) {
    switch (kind_) {
      case Kind::GcmTable:
        command_row(line);
        return;
      case Kind::GcmShared:
        if (option_table_ && starts_with(line, "| `") && !cells_of(line).empty())
          for (const auto& d : declared_in(cells_of(line)[0], number)) add_declared(ref_.gcm_shared, d);
        return;
      case Kind::HealthTree:
        tree_line(line, number);
        return;
      case Kind::HealthCommon:
        common_line(line, number);
        return;
      case Kind::GcmCommands:
      case Kind::HealthChecks:
        command_line(line, number);
        return;
      case Kind::None:
        return;
    }
  }

  // §1.2: | `name` | module | purpose | data type | interval |
  void command_row(const std::string& line) {
    if (!starts_with(line, "| `")) return;
    auto cells = cells_of(line);
    if (cells.size() < 4) return;
    auto spans = spans_of(cells[0]);
    if (spans.size() != 1) return;
    ref_.gcm_commands.insert(spans[0].text);
    if (cells[3].find("LOG") != std::string::npos || cells[3].find("METRIC") != std::string::npos)
      ref_.gcm_collectors.insert(spans[0].text);
  }

  // §3.7: "├── check-process             check-dstate | check-running-process | check-zombie" or
  // "├── check-blockdev            (command)".
  void tree_line(const std::string& line, int number) {
    size_t at = line.find("── ");
    if (at == std::string::npos) return;
    std::stringstream in(line.substr(at + std::string("── ").size()));
    std::string group, rest;
    in >> group;
    std::getline(in, rest);
    rest = rest.substr(std::min(rest.size(), rest.find_first_not_of(' ')));
    if (starts_with(rest, "(command")) {
      ref_.health_tree.insert({group});
      return;
    }
    std::stringstream subs(rest);
    size_t added = 0;
    for (std::string w; subs >> w;)
      if (w != "|") {
        ref_.health_tree.insert({group, w});
        ++added;
      }
    if (added == 0) ref_.problems.push_back("line " + std::to_string(number) + ": tree line without checks");
  }

  // §3.2: the list after "Every check has:" up to the blank line, and "Checks WITHOUT `--timeout`: a, b c, ...".
  void common_line(const std::string& line, int number) {
    if (line == "Every check has:") {
      in_common_list_ = true;
      return;
    }
    if (line.empty()) in_common_list_ = false;
    if (in_common_list_ && starts_with(line, "- ")) {
      for (const auto& d : declared_in(line, number))
        add_declared(d.names.count("--timeout") ? ref_.health_timeout : ref_.health_common, d);
      return;
    }
    const std::string without = "Checks WITHOUT `--timeout`: ";
    if (starts_with(line, without)) {
      std::string list = line.substr(without.size());
      if (!list.empty() && list.back() == '.') list.pop_back();
      std::stringstream items(list);
      for (std::string item; std::getline(items, item, ',');) {
        std::stringstream words(item);
        Path p;
        for (std::string w; words >> w;) p.push_back(w);
        ref_.health_without_timeout.insert(p);
        without_timeout_line_ = number;
      }
    }
  }

  std::map<Path, Declarations>& declarations() { return gcm_part_ ? ref_.gcm : ref_.health; }

  void declare(const Declarations& ds) {
    for (const auto& p : current_)
      for (const auto& d : ds) add_declared(declarations()[p], d);
  }

  // A line of a command's or a check's section.
  void command_line(const std::string& line, int number) {
    static const std::regex kSubcheck(R"(^`([a-z0-9-]+)`:$)");
    static const std::regex kOptionsWord(R"((^|- |\. )Options?:?( |$))");
    std::smatch m;
    if (kind_ == Kind::HealthChecks && !group_.empty() && std::regex_match(line, m, kSubcheck)) {
      Path p = {group_, m[1]};
      current_.clear();
      if (ref_.health_tree.count(p))
        current_ = {p};
      else
        ref_.problems.push_back("line " + std::to_string(number) + ": '" + joined(p, "") + "' is no check of the tree");
      return;
    }
    if (current_.empty()) return;
    if (starts_with(line, "|")) {
      if (option_table_) table_row(line, number);
      return;
    }
    if (std::regex_search(line, m, kOptionsWord) || starts_with(line, "`-")) {
      std::string rest = line.substr(m.empty() ? 0 : m.position(0) + m.length(0));
      if (gcm_part_ && rest.find("shared") != std::string::npos) {
        // "Options: shared, plus:", "the shared options (no `--interval` and no `--once`...)": what it lacks.
        std::set<std::string> absent;
        declare(declared_in(rest, number, &absent));
        for (const auto& p : current_) ref_.gcm_absent[p].insert(absent.begin(), absent.end());
      } else {
        declare(declared_in(rest, number));
      }
      return;
    }
    if (gcm_part_ && starts_with(line, "- `")) usage_line(line, number);
  }

  // A row of an "Option" table. A row whose second cell is "shared" names shared options (nvml_monitor's "`--sink`,
  // `-o`, ..."; sacct_backfill's "shared defaults"): each is the shared option of that name, under all its names, and
  // the table lists the command's every option.
  void table_row(const std::string& line, int number) {
    auto cells = cells_of(line);
    if (cells.empty()) return;
    Declarations ds = declared_in(cells[0], number);
    if (gcm_part_ && cells.size() > 1 && starts_with(cells[1], "shared")) {
      for (auto& d : ds)
        for (const auto& shared : ref_.gcm_shared)
          if (shared.names.count(*d.names.begin())) d.names = shared.names;
      for (const auto& p : current_) ref_.gcm_lists_all.insert(p);
    }
    declare(ds);
  }

  // "- `new [-s/--start "3 hours ago"] [-e/--end "now"] [--step 1 (hours)] -- PUBLISH_CMD...`": a subcommand and
  // the first word of each bracket.
  void usage_line(const std::string& line, int number) {
    static const std::regex kUsage(R"(^([a-z_]+) (\[.*)$)");
    static const std::regex kBracket(R"(\[([^\]]*)\])");
    auto spans = spans_of(line);
    std::smatch m;
    if (spans.empty() || current_.size() != 1 || !std::regex_match(spans[0].text, m, kUsage)) return;
    Path sub = current_[0];
    sub.push_back(m[1]);
    std::string brackets = m[2];
    Declarations& list = ref_.gcm[sub];
    for (auto it = std::sregex_iterator(brackets.begin(), brackets.end(), kBracket); it != std::sregex_iterator();
         ++it) {
      auto names = option_names((*it)[1]);
      if (names.empty())
        ref_.problems.push_back("line " + std::to_string(number) + ": '[" + (*it)[1].str() + "]' names no option");
      else
        add_declared(list, {std::set<std::string>(names.begin(), names.end()), number});
    }
  }

  Reference& ref_;
  Kind kind_ = Kind::None;
  bool gcm_part_ = false, health_part_ = false;
  bool option_table_ = false;
  bool in_common_list_ = false;
  int without_timeout_line_ = 0;
  std::vector<Path> current_;  // the commands or the check the lines describe
  std::string group_;          // a §3.8 group whose "`sub`:" lines name its checks
};

std::optional<Reference> read_reference() {
  std::ifstream in(kReferencePath);
  if (!in) return std::nullopt;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  Reference ref;
  ReferenceReader(ref).read(lines);
  return ref;
}

// Which option of a command a name reaches, as a printable identity ("-o,--operation"); nullopt: none.
using Resolved = std::map<std::string, std::optional<std::string>>;

std::optional<std::string> identity_in(const CLI::App& app, const std::string& name) {
  const CLI::Option* o = app.get_option_no_throw(name);
  if (!o) return std::nullopt;
  return o->get_name(false, true);
}

// fsacct parses its own words (the rest go to sacct): a name reaches the field its value lands in.
std::optional<std::string> fsacct_identity(const std::string& name) {
  sacct::FsacctArgs a;
  try {
    a = sacct::parse_fsacct_args({name, "7"});
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (a.start == "7") return "start";
  if (a.end == "7") return "end";
  if (a.format == std::vector<std::string>{"7"}) return "format";
  if (a.states == std::vector<std::string>{"7"}) return "states";
  if (a.delimiter == "7") return "delimiter";
  if (a.batch_size == 7) return "batch_size";
  return std::nullopt;
}

// GCM's options this project leaves out on purpose, each with the page that says so: an operator's GCM line with
// one of them fails with an unknown-option error rather than being accepted and ignored.
struct LeftOut {
  Path command;
  std::string name;
  std::string documented_in;  // relative to the source tree; must name the option
};
const std::vector<LeftOut>& left_out() {
  // sacct_backfill's rendezvous (a Python multiprocessing barrier between clusters' backfills) is Meta-specific.
  static const std::vector<LeftOut> list = {
      {{"sacct_backfill"}, "--rendezvous-host", "docs/reference/sacct.md"},
      {{"sacct_backfill"}, "--rendezvous-port", "docs/reference/sacct.md"},
      {{"sacct_backfill"}, "--authkey", "docs/reference/sacct.md"},
      {{"sacct_backfill"}, "--rendezvous-timeout", "docs/reference/sacct.md"},
  };
  return list;
}

const LeftOut* left_out_of(const Path& command, const std::string& name) {
  for (const auto& l : left_out())
    if (l.command == command && l.name == name) return &l;
  return nullptr;
}

std::string source_file(const std::string& relative) {
  std::ifstream in(std::string(GCM_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Each declared option: every name reaches an option, all its names the same one, and no two declared options the
// same one. Returns the number of names checked.
size_t expect_same_options(const Path& path, const std::string& command, const Declarations& want,
                           const Resolved& got) {
  size_t checked = 0;
  std::map<std::string, int> declared_at;  // identity -> the line of the option that reached it
  for (const auto& d : want) {
    std::optional<std::string> first;
    std::string first_name;
    for (const auto& name : d.names) {
      ++checked;
      auto it = got.find(name);
      std::optional<std::string> id = it == got.end() ? std::nullopt : it->second;
      if (const LeftOut* l = left_out_of(path, name)) {
        EXPECT_FALSE(id) << command << ": " << name << " is listed as left out, but it is an option: drop it from "
                         << "left_out()";
        EXPECT_NE(source_file(l->documented_in).find("`" + name + "`"), std::string::npos)
            << command << ": " << name << " is left out, but " << l->documented_in << " does not say so";
        continue;
      }
      if (!id) {
        ADD_FAILURE() << command << ": GCM has " << name << " (gcm-reference.md line " << d.line
                      << "); it is not an option here";
        continue;
      }
      if (!first) {
        first = id;
        first_name = name;
      } else if (*id != *first) {
        ADD_FAILURE() << command << ": in GCM " << first_name << " and " << name << " are one option (line " << d.line
                      << "); here " << first_name << " is " << *first << " and " << name << " is " << *id;
      }
    }
    if (!first) continue;
    auto [at, fresh] = declared_at.emplace(*first, d.line);
    if (!fresh)
      ADD_FAILURE() << command << ": " << first_name << " (line " << d.line << ") reaches " << *first
                    << ", the option GCM declares on line " << at->second;
  }
  return checked;
}

std::set<std::string> names_of(const Declarations& ds) {
  std::set<std::string> out;
  for (const auto& d : ds) out.insert(d.names.begin(), d.names.end());
  return out;
}

class GcmReferenceOptions : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kReferencePath))
      GTEST_SKIP() << "the reference is not present (" << kReferencePath << "): options not compared with GCM's";
    auto r = read_reference();
    ASSERT_TRUE(r) << "cannot read " << kReferencePath;
    ref = std::move(*r);
    for (const auto& p : ref.problems) ADD_FAILURE() << "gcm-reference.md " << p;
  }
  Reference ref;
};

TEST_F(GcmReferenceOptions, TheReaderFindsEveryCommandCheckAndOptionOfTheReference) {
  // What gcm-reference.md (GCM 1b7bde9) holds; a reader that lost its way in the prose finds fewer.
  EXPECT_GE(ref.gcm_commands.size(), 12u);
  EXPECT_GE(ref.gcm_collectors.size(), 10u);
  EXPECT_GE(ref.gcm_shared.size(), 12u) << "§1.3's table";
  EXPECT_TRUE(names_of(ref.gcm_shared).count("--sink-opt") && names_of(ref.gcm_shared).count("-n"));
  EXPECT_GE(ref.gcm.size(), 10u) << "the root and the commands whose section declares options";
  EXPECT_GE(names_of(ref.gcm_expected({"fsacct"})).size(), 10u);
  EXPECT_GE(names_of(ref.gcm_expected({"nvml_monitor"})).size(), 12u);
  EXPECT_EQ(ref.health_tree.size(), 45u) << "§3.7's tree";
  EXPECT_EQ(ref.health_common.size(), 6u) << "§3.2: log level and folder, sink, sink options, verbose-out, "
                                             "heterogeneous-cluster-v1";
  EXPECT_EQ(ref.health_timeout.size(), 1u);
  EXPECT_EQ(ref.health_without_timeout.size(), 9u);
  size_t checks_with_options = 0, check_option_names = 0;
  for (const auto& [path, ds] : ref.health) {
    if (path.empty()) continue;
    ++checks_with_options;
    check_option_names += names_of(ds).size();
  }
  EXPECT_GE(checks_with_options, 40u);
  EXPECT_GE(check_option_names, 137u);
  EXPECT_EQ(names_of(ref.health[{}]), (std::set<std::string>{"--config", "--features-config", "-d", "--detach",
                                                             "--version"}));
  // The line of issue 55: in GCM, -o of this check is --operation.
  Declarations access = ref.health_expected({"check-authentication", "check-path-access-by-user"});
  bool operation_has_o = false, sink_opt_without_o = false;
  for (const auto& d : access) {
    if (d.names == std::set<std::string>{"-o", "--operation"}) operation_has_o = true;
    if (d.names == std::set<std::string>{"--sink-opt"}) sink_opt_without_o = true;
  }
  EXPECT_TRUE(operation_has_o && sink_opt_without_o);
}

TEST_F(GcmReferenceOptions, EveryGcmCommandHasGcmsOptionsUnderGcmsNames) {
  std::set<Path> wanted = {{}};
  for (const auto& c : ref.gcm_commands) wanted.insert({c});
  for (const auto& [path, ds] : ref.gcm) wanted.insert(path);
  std::map<Path, Resolved> resolved;
  visit_gcm_command_lines([&](const Path& path, const CLI::App& app) {
    if (!wanted.count(path)) return;
    Resolved& r = resolved[path];
    for (const auto& name : names_of(ref.gcm_expected(path)))
      r[name] = path == Path{"fsacct"} ? fsacct_identity(name) : identity_in(app, name);
  });
  size_t checked = 0;
  for (const auto& path : wanted) {
    if (!resolved.count(path)) {
      ADD_FAILURE() << "GCM has the command '" << joined(path, "gcm") << "'; gcm has not";
      continue;
    }
    checked += expect_same_options(path, joined(path, "gcm"), ref.gcm_expected(path), resolved[path]);
  }
  EXPECT_GE(checked, 178u) << "names compared";
}

TEST_F(GcmReferenceOptions, EveryHealthCheckHasGcmsOptionsUnderGcmsNames) {
  std::set<Path> wanted = ref.health_tree;
  wanted.insert(Path{});
  std::map<Path, Resolved> resolved;
  visit_health_checks_command_lines([&](const Path& path, const CLI::App& app) {
    if (!wanted.count(path)) return;
    Resolved& r = resolved[path];
    for (const auto& name : names_of(ref.health_expected(path)))
      r[name] = identity_in(app, health_checks_cli_word(name));
  });
  size_t checked = 0;
  for (const auto& path : wanted) {
    if (!resolved.count(path)) {
      ADD_FAILURE() << "GCM has the check '" << joined(path, "health_checks") << "'; health_checks has not";
      continue;
    }
    checked += expect_same_options(path, joined(path, "health_checks"), ref.health_expected(path), resolved[path]);
  }
  EXPECT_GE(checked, 488u) << "names compared";
}

}  // namespace
}  // namespace gcm
