#include "health/dcgmi_output.h"

#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/ascii.h"
#include "core/json_limits.h"

namespace gcm::health {

namespace {

using nlohmann::json;

std::optional<json> parse_json(std::string_view text) {
  json j = parse_json_limited(text);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::string string_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return v.dump();
}

// Blanks and the \r of a CRLF line; a cell's other control bytes are kept.
std::string trim_blanks(std::string_view s) { return std::string(ascii_trim(s, " \t\r")); }

}  // namespace

const std::set<std::string>& dcgm_diag_test_names() {
  static const std::set<std::string> names = {"Blacklist",
                                              "NVML Library",
                                              "CUDA Main Library",
                                              "Permissions and OS Blocks",
                                              "Persistence Mode",
                                              "Environment Variables",
                                              "Page Retirement/Row Remap",
                                              "Graphics Processes",
                                              "Inforom",
                                              "PCIe",
                                              "GPU Memory",
                                              "Diagnostic",
                                              "Pulse Test",
                                              "SM Stress",
                                              "Targeted Stress",
                                              "Targeted Power",
                                              "Memory Bandwidth",
                                              "Memtest"};
  return names;
}

namespace {

// "Targeted Stress" (3.x) and "targeted_stress" (4.x) are one test: --exclude_category takes the 3.x names. 4.x
// renamed "GPU Memory" to "memory"; its one "software" test replaced 3.x's separate deployment tests, which keep
// their own keys (excluding one of them does not exclude them all).
std::string test_key(std::string_view name) {
  std::string k;
  for (char c : name) k += c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return k == "gpu_memory" ? "memory" : k;
}

// The GPU a result is about: "gpu_ids" (3.x) or "entity_id" of an entity_group "GPU" (4.x); "" when neither.
std::string result_gpu(const json& r) {
  if (r.contains("gpu_ids")) return string_of(r["gpu_ids"]);
  if (r.contains("entity_id") && (!r.contains("entity_group") || string_of(r["entity_group"]) == "GPU"))
    return string_of(r["entity_id"]);
  return "";
}

void add_warnings(const json& r, std::vector<std::string>& details) {
  // DCGM puts the reason in "warnings": [{"warning": "..."}] (or a plain string) on failing results.
  auto w = r.find("warnings");
  if (w == r.end()) return;
  if (w->is_array()) {
    for (const json& x : *w) {
      if (x.is_object() && x.contains("warning"))
        details.push_back(string_of(x["warning"]));
      else if (x.is_string())
        details.push_back(x.get<std::string>());
    }
  } else if (w->is_string()) {
    details.push_back(w->get<std::string>());
  }
}

}  // namespace

DcgmiVerdict evaluate_dcgmi_diag(std::string_view text, const std::set<std::string>& excluded) {
  auto j = parse_json(text);
  const json* cats = nullptr;
  if (j && j->is_object()) {
    // DCGM 3.x names its document "DCGM GPU Diagnostic", 4.x "DCGM Diagnostic" (GCM PR #38); the tree below is
    // the same: test_categories -> tests -> results.
    for (const char* key : {"DCGM GPU Diagnostic", "DCGM Diagnostic"}) {
      auto diag = j->find(key);
      if (diag == j->end() || !diag->is_object()) continue;
      auto c = diag->find("test_categories");
      if (c != diag->end() && c->is_array()) cats = &*c;
      break;
    }
  }
  if (!cats)
    return {ExitCode::WARN,
            "dcgmi diag output has no [\"DCGM GPU Diagnostic\"] (DCGM 3.x) or [\"DCGM Diagnostic\"] "
            "(DCGM 4.x) [\"test_categories\"]: cannot judge."};
  std::set<std::string> excluded_keys;
  for (const auto& e : excluded) excluded_keys.insert(test_key(e));
  ExitCode code = ExitCode::OK;
  std::vector<std::string> lines;
  for (const json& cat : *cats) {
    if (!cat.is_object()) continue;
    auto tests = cat.find("tests");
    if (tests == cat.end() || !tests->is_array()) continue;
    for (const json& t : *tests) {
      if (!t.is_object()) continue;
      std::string name = t.contains("name") ? string_of(t["name"]) : "";
      if (excluded_keys.count(test_key(name))) continue;
      std::vector<std::string> failed_gpus, warned_gpus, details;
      bool failed = false, warned = false;
      // DCGM 4.x sums a test up in "test_summary": {"status": ...} (what GCM judges); a test without per-GPU
      // results (a skipped plugin, a system-wide software test) has only that.
      if (auto sum = t.find("test_summary"); sum != t.end() && sum->is_object() && sum->contains("status")) {
        std::string status = string_of((*sum)["status"]);
        failed = status == "Fail";
        warned = status == "Warn";
        if (failed || warned) add_warnings(*sum, details);
      }
      if (auto results = t.find("results"); results != t.end() && results->is_array()) {
        for (const json& r : *results) {
          if (!r.is_object() || !r.contains("status")) continue;
          std::string status = string_of(r["status"]);
          std::string gpu = result_gpu(r);
          if (status == "Fail") {
            failed = true;
            if (!gpu.empty()) failed_gpus.push_back(gpu);
          } else if (status == "Warn") {
            warned = true;
            if (!gpu.empty()) warned_gpus.push_back(gpu);
          } else {
            continue;
          }
          add_warnings(r, details);
        }
      }
      if (!failed && !warned) continue;
      std::string line = fmt::format("{} {}", name, failed ? "failed" : "warning");
      const auto& gpus = failed ? failed_gpus : warned_gpus;
      if (!gpus.empty()) line += fmt::format(" on GPU {}", fmt::join(gpus, ", "));
      if (!details.empty()) line += fmt::format(": {}", fmt::join(details, "; "));
      lines.push_back(line + ".");
      code = worse(code, failed ? ExitCode::CRITICAL : ExitCode::WARN);
    }
  }
  if (lines.empty()) return {ExitCode::OK, "All checks passed."};
  return {code, fmt::format("{}", fmt::join(lines, "\n"))};
}

DcgmiVerdict evaluate_dcgmi_nvlink_errors(std::string_view text, const NvlinkThresholds& t) {
  auto j = parse_json(text);
  if (!j || !j->is_object() || !j->contains("body") || !(*j)["body"].is_object())
    return {ExitCode::WARN, "dcgmi nvlink output has no \"body\": cannot judge."};
  struct Counter {
    const char* name;
    int64_t threshold;
  };
  const Counter counters[] = {{"CRC Data Error", t.data},
                              {"CRC FLIT Error", t.flit},
                              {"Recovery Error", t.recovery},
                              {"Replay Error", t.replay}};
  ExitCode code = ExitCode::OK;
  std::vector<std::string> lines;
  for (const auto& [link, node] : (*j)["body"].items()) {
    if (!node.is_object()) continue;
    auto children = node.find("children");
    if (children == node.end() || !children->is_object()) continue;
    for (const auto& [name, entry] : children->items()) {
      if (!entry.is_object() || !entry.contains("value")) continue;
      std::string value = trim_blanks(string_of(entry["value"]));
      if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) continue;  // "Not Supported"
      int64_t v = 0;
      try {
        v = std::stoll(value);
      } catch (const std::out_of_range&) {
        v = INT64_MAX;
      }
      for (const Counter& c : counters) {
        if (name.find(c.name) == std::string::npos || v <= c.threshold) continue;
        code = ExitCode::CRITICAL;
        lines.push_back(fmt::format("High {} count detected link: {}, error count: {}.", c.name, link, v));
      }
    }
  }
  if (lines.empty()) return {ExitCode::OK, "No NVLink errors above the thresholds."};
  return {code, fmt::format("{}", fmt::join(lines, " "))};
}

DcgmiVerdict evaluate_dcgmi_nvlink_status(std::string_view text) {
  // "    gpuId 0:\n        U U D U X ..." : the line after each gpuId line lists its links.
  ExitCode code = ExitCode::OK;
  std::vector<std::string> lines;
  std::string current;
  bool expect_links = false;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.find("gpuId") != std::string_view::npos || line.find("GPUID") != std::string_view::npos ||
        line.find("gpuid") != std::string_view::npos) {
      current = trim_blanks(line);
      if (!current.empty() && current.back() == ':') current.pop_back();
      expect_links = true;
      continue;
    }
    if (!expect_links) continue;
    expect_links = false;
    int down = 0, disabled = 0;
    for (char c : line) {
      down += c == 'D';
      disabled += c == 'X';
    }
    if (down || disabled) {
      code = ExitCode::CRITICAL;
      lines.push_back(fmt::format("{} has {} links down and {} links disabled.", current, down, disabled));
    }
  }
  if (lines.empty()) return {ExitCode::OK, "All nvlink links are up for all GPUs."};
  return {code, fmt::format("{}", fmt::join(lines, " "))};
}

}  // namespace gcm::health
