#include "health/ib_fabric_output.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gcm::health {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

std::string_view strip(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> v;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    v.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return v;
}

// Python's repr of a float for the values mlxlink prints ("49" -> "49.0", "9.21" -> "9.21").
std::string py_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

// A whole string as a number; nullopt when anything is left over.
std::optional<double> to_double(std::string_view s) {
  std::string t(strip(s));
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> hex_value(std::string_view s) {
  s = strip(s);
  if (s.starts_with("0x") || s.starts_with("0X")) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
            : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
            : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                        : -1;
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  return v;
}

// ibnetdiscover's switch lines: Switch <ports> "S-<guid>" # "<name> ..." -> {guid: name}.
std::map<std::string, std::string> switch_names(std::string_view discover) {
  std::map<std::string, std::string> names;
  for (std::string_view l : lines_of(discover)) {
    if (!l.starts_with("Switch")) continue;
    std::string_view r = l.substr(6);
    size_t n = 0;
    while (n < r.size() && is_space(r[n])) ++n;
    if (n == 0) continue;
    r.remove_prefix(n);
    n = 0;
    while (n < r.size() && std::isdigit(static_cast<unsigned char>(r[n]))) ++n;
    if (n == 0) continue;
    r = strip(r.substr(n));
    if (!r.starts_with("\"S-")) continue;
    size_t close = r.find('"', 3);
    if (close == std::string_view::npos || close == 3) continue;
    std::string guid(r.substr(3, close - 3));
    r = strip(r.substr(close + 1));
    if (!r.starts_with("#")) continue;
    r = strip(r.substr(1));
    if (!r.starts_with("\"")) continue;
    r.remove_prefix(1);
    size_t end = 0;
    while (end < r.size() && r[end] != '"' && !is_space(r[end])) ++end;
    if (end == 0) continue;
    names[guid] = std::string(r.substr(0, end));
  }
  return names;
}

// The port's name from its header line: "Port Name=S<guid>/N<guid>/P<n>" of a switch becomes "<switch name>/P<n>".
std::string port_label(std::string_view header, const std::map<std::string, std::string>& names) {
  size_t at = 0;
  std::string_view part;
  while ((at = header.find("Name=", at)) != std::string_view::npos) {
    std::string_view rest = header.substr(at + 5);
    size_t end = 0;
    while (end < rest.size() && !is_space(rest[end])) ++end;
    if (end > 0) {
      part = rest.substr(0, end);
      break;
    }
    at += 5;
  }
  if (part.empty()) return std::string(strip(header));
  std::vector<std::string_view> seg;
  for (size_t p = 0;;) {
    size_t slash = part.find('/', p);
    seg.push_back(part.substr(p, slash == std::string_view::npos ? std::string_view::npos : slash - p));
    if (slash == std::string_view::npos) break;
    p = slash + 1;
  }
  if (seg.size() >= 3 && seg[0].starts_with("S") && seg[1].starts_with("N")) {
    std::string guid(seg[0].substr(1));
    auto it = names.find(guid);
    std::string host = it != names.end() ? it->second : fmt::format("Unknown[{}]", guid);
    return fmt::format("{}/{}", host, seg[2]);
  }
  return std::string(part);
}

}  // namespace

const std::vector<std::string>& ibdiagnet_error_counters() {
  static const std::vector<std::string> v = {"excessive_buffer_overrun_errors_extended",
                                             "link_error_recovery_counter_extended",
                                             "local_link_integrity_errors_extended",
                                             "port_buffer_overrun_errors",
                                             "port_dlid_mapping_errors",
                                             "port_local_physical_errors",
                                             "port_looping_errors",
                                             "port_malformed_packet_errors",
                                             "port_rcv_constraint_errors_extended",
                                             "port_rcv_errors_extended",
                                             "port_rcv_remote_physical_errors_extended",
                                             "port_rcv_switch_relay_errors_extended",
                                             "port_vl_mapping_errors",
                                             "port_xmit_constraint_errors_extended",
                                             "symbol_error_counter_extended"};
  return v;
}

FabricVerdict evaluate_ibdiagnet_pm(std::string_view pm, std::string_view ibnetdiscover, int64_t threshold) {
  if (strip(pm).empty()) return {ExitCode::WARN, "PM file is empty"};
  auto names = switch_names(ibnetdiscover);
  const auto& keys = ibdiagnet_error_counters();
  struct Error {
    std::string port, counter;
    uint64_t count;
  };
  std::vector<Error> errors;
  std::vector<std::string> unreadable;
  bool any_block = false;
  std::string label;
  auto lines = lines_of(pm);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view raw = lines[i];
    if (raw.starts_with("Port=")) {  // a block starts at a line beginning with Port=
      any_block = true;
      label = port_label(strip(raw), names);
      continue;
    }
    if (!any_block) continue;
    std::string_view line = strip(raw);
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key(strip(line.substr(0, eq)));
    std::string_view value = strip(line.substr(eq + 1));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) continue;
    if (value.find("NA") != std::string_view::npos) continue;  // ibdiagnet: counter not available on this port
    auto count = hex_value(value);
    if (!count) {
      // GCM skips these silently; a counter we cannot read may hide errors, so it is named (line numbers from 1).
      unreadable.push_back(fmt::format("line {}: {}={}", i + 1, key, value.substr(0, 40)));
      continue;
    }
    if (threshold < 0 || *count > static_cast<uint64_t>(threshold)) {
      std::string clean = key;
      if (size_t x = clean.find("_extended"); x != std::string::npos) clean.erase(x, 9);
      errors.push_back({label, clean, *count});
    }
  }
  if (!any_block) return {ExitCode::WARN, "No port data found in PM file"};
  std::sort(errors.begin(), errors.end(), [](const Error& a, const Error& b) {
    return std::tie(b.count, a.port, a.counter) < std::tie(a.count, b.port, b.counter);
  });
  std::string note;
  if (!unreadable.empty())
    note = fmt::format("\n{} counter value(s) are not hexadecimal numbers: {}", unreadable.size(),
                       fmt::join(unreadable, "; "));
  if (errors.empty())
    return {unreadable.empty() ? ExitCode::OK : ExitCode::WARN,
            fmt::format("No port errors above threshold ({}).{}", threshold, note)};
  std::string msg = fmt::format("{} port error(s) detected:", errors.size());
  for (const auto& e : errors) msg += fmt::format("\n{}: {}={}", e.port, e.counter, e.count);
  return {ExitCode::CRITICAL, msg + note};
}

namespace {

// A "Name [unit or per lane] : value" line of mlxlink's output: the value after the colon, or nullopt when the
// line is not this field. bracket: "" for fields whose only suffix is " [per lane]", "*" for DDM fields, whose
// suffix is any bracketed unit ("[C]", "[mA]").
std::optional<std::string_view> field_value(std::string_view line, std::string_view name, bool any_bracket) {
  if (!line.starts_with(name)) return std::nullopt;
  std::string_view r = line.substr(name.size());
  if (!any_bracket && r.starts_with(" [per lane]")) {
    r.remove_prefix(11);
  } else if (any_bracket && r.starts_with(" [")) {
    size_t close = r.find(']');
    if (close == std::string_view::npos || close == 2) return std::nullopt;
    r.remove_prefix(close + 1);
  }
  while (!r.empty() && is_space(r.front())) r.remove_prefix(1);
  if (!r.starts_with(":")) return std::nullopt;
  r.remove_prefix(1);
  while (!r.empty() && is_space(r.front())) r.remove_prefix(1);
  if (r.empty()) return std::nullopt;
  return r;
}

std::optional<std::string_view> first_field(const std::vector<std::string_view>& lines, std::string_view name,
                                            bool any_bracket = false) {
  for (auto l : lines)
    if (auto v = field_value(l, name, any_bracket)) return v;
  return std::nullopt;
}

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> v;
  for (size_t p = 0;;) {
    size_t c = s.find(',', p);
    v.push_back(s.substr(p, c == std::string_view::npos ? std::string_view::npos : c - p));
    if (c == std::string_view::npos) break;
    p = c + 1;
  }
  return v;
}

}  // namespace

ExitCode evaluate_mlxlink_module(const std::string& device, std::string_view output, int rc, const MlxlinkRules& rules,
                                 std::vector<std::string>& issues) {
  if (rc != 0) {
    issues.push_back(fmt::format("{}: mlxlink failed (rc={})", device, rc));
    return ExitCode::WARN;
  }
  auto lines = lines_of(output);
  ExitCode code = ExitCode::OK;
  if (auto v = first_field(lines, "Module State"); v && strip(*v) != "Ready state") {
    issues.push_back(fmt::format("{}: Module State={}", device, strip(*v)));
    code = ExitCode::CRITICAL;
  }
  if (auto v = first_field(lines, "DataPath state")) {
    for (auto s : split_commas(*v))
      if (strip(s) != "DPActivated") {
        issues.push_back(fmt::format("{}: DataPath state={}", device, strip(*v)));
        code = ExitCode::CRITICAL;
        break;
      }
  }
  auto flags = [&](const std::vector<std::string>& names, ExitCode level) {
    for (const auto& flag : names) {
      auto v = first_field(lines, flag);
      if (!v) continue;
      std::vector<long long> lanes;
      bool set = false;
      for (auto part : split_commas(*v)) {
        // A lane that is not a number ("N/A") counts as healthy, as in GCM.
        std::string t(strip(part));
        char* end = nullptr;
        long long n = t.empty() ? 0 : std::strtoll(t.c_str(), &end, 10);
        if (t.empty() || end != t.c_str() + t.size()) n = 0;
        lanes.push_back(n);
        set = set || n != 0;
      }
      if (!set) continue;
      issues.push_back(fmt::format("{}: {}=[{}]", device, flag, fmt::join(lanes, ", ")));
      code = worse(code, level);
    }
  };
  flags(rules.critical_flags, ExitCode::CRITICAL);
  flags(rules.warn_flags, ExitCode::WARN);
  if (rules.check_ddm_ranges) {
    for (const char* metric : {"Temperature", "Voltage", "Bias Current", "Rx Power Current", "Tx Power Current"}) {
      auto v = first_field(lines, metric, true);
      if (!v) continue;
      // "<values> [<min>..<max>]"
      size_t open = v->find('[');
      size_t dots = v->find("..", open == std::string_view::npos ? 0 : open);
      size_t close = v->find(']', dots == std::string_view::npos ? 0 : dots);
      if (open == std::string_view::npos || dots == std::string_view::npos || close == std::string_view::npos) continue;
      auto lo = to_double(v->substr(open + 1, dots - open - 1));
      auto hi = to_double(v->substr(dots + 2, close - dots - 2));
      std::vector<double> values;
      bool ok = lo && hi;
      for (auto part : split_commas(strip(v->substr(0, open)))) {
        if (strip(part).empty()) continue;
        auto d = to_double(part);
        if (!d)
          ok = false;
        else
          values.push_back(*d);
      }
      if (!ok || values.empty()) continue;
      bool out = std::any_of(values.begin(), values.end(), [&](double x) { return x < *lo || x > *hi; });
      if (!out) continue;
      std::vector<std::string> shown;
      for (double x : values) shown.push_back(py_float(x));
      issues.push_back(fmt::format("{}: {}=[{}] outside [{}..{}]", device, metric, fmt::join(shown, ", "),
                                   py_float(*lo), py_float(*hi)));
      code = worse(code, ExitCode::WARN);
    }
  }
  return code;
}

namespace {

// `word` (upper case) as a whole word anywhere in `text`, ignoring case (GCM's \bALARM\b with re.IGNORECASE).
bool has_word_ci(std::string_view text, std::string_view word) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i + word.size() <= text.size(); ++i) {
    size_t k = 0;
    while (k < word.size() && std::toupper(static_cast<unsigned char>(text[i + k])) == word[k]) ++k;
    if (k != word.size()) continue;
    bool left = i == 0 || !is_word(text[i - 1]);
    bool right = i + k == text.size() || !is_word(text[i + k]);
    if (left && right) return true;
  }
  return false;
}

}  // namespace

FabricVerdict evaluate_mlxcables_ddm(const std::string& device, std::string_view output, int rc) {
  if (rc != 0) return {ExitCode::WARN, fmt::format("{}: mlxcables failed (rc={})", device, rc)};
  std::vector<std::string> found;
  if (has_word_ci(output, "ALARM")) found.push_back("ALARM");
  if (has_word_ci(output, "WARNING")) found.push_back("WARNING");
  if (!found.empty()) return {ExitCode::WARN, fmt::format("{}: DDM {} detected", device, fmt::join(found, ", "))};
  return {ExitCode::OK, fmt::format("{}: healthy", device)};
}

FabricVerdict evaluate_sminfo(std::string_view output, int rc) {
  std::string shown(strip(output));
  if (rc != 0) return {ExitCode::CRITICAL, fmt::format("SM unreachable (sminfo rc={}): {}", rc, shown)};
  // "sminfo: sm lid 1 sm guid 0x..., activity count 1234 priority 15 state 3 SMINFO_MASTER"
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = output.find("state"); at != std::string_view::npos; at = output.find("state", at + 1)) {
    if (at > 0 && is_word(output[at - 1])) continue;
    size_t p = at + 5, sp = p;
    while (p < output.size() && is_space(output[p])) ++p;
    if (p == sp) continue;
    size_t digits = p;
    while (p < output.size() && std::isdigit(static_cast<unsigned char>(output[p]))) ++p;
    if (p == digits) continue;
    sp = p;
    while (p < output.size() && is_space(output[p])) ++p;
    if (p == sp) continue;
    size_t end = p;
    while (end < output.size() && !is_space(output[end])) ++end;
    if (end == p) continue;
    std::string state(output.substr(p, end - p));
    for (auto& c : state) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (state.find("MASTER") != std::string::npos) return {ExitCode::OK, fmt::format("SM reachable, state {}", state)};
    return {ExitCode::WARN, fmt::format("SM reachable but in state {} (expected MASTER)", state)};
  }
  return {ExitCode::WARN, fmt::format("Could not parse SM state from: {}", shown)};
}

FabricVerdict evaluate_ufm_unhealthy_ports(std::string_view dump) {
  std::string_view content = strip(dump);
  std::vector<std::string_view> ports;
  for (auto l : lines_of(content))
    if (!strip(l).empty() && !l.starts_with("#")) ports.push_back(l);
  if (ports.empty()) return {ExitCode::OK, "No unhealthy ports reported by UFM."};
  constexpr size_t kShown = 20;
  std::string msg = fmt::format("{} unhealthy port(s) reported by UFM:", ports.size());
  for (size_t i = 0; i < ports.size() && i < kShown; ++i) msg += fmt::format("\n{}", ports[i]);
  if (ports.size() > kShown) msg += fmt::format("\n... ({} more)", ports.size() - kShown);
  return {ExitCode::CRITICAL, msg};
}

}  // namespace gcm::health
