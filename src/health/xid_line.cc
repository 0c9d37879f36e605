#include "health/xid_line.h"

namespace gcm::health {

namespace {

// "(<device>): <digits>" at the start of s.
std::optional<XidLine> parse_after_keyword(std::string_view s, XidKind kind) {
  XidLine x;
  x.kind = kind;
  while (!s.empty() && s[0] == ' ') s.remove_prefix(1);
  if (s.empty() || s[0] != '(') return x;
  size_t close = s.find(')');
  if (close == std::string_view::npos || close == 1) return x;
  x.device = s.substr(1, close - 1);
  s.remove_prefix(close + 1);
  if (s.size() < 2 || s[0] != ':' || s[1] != ' ') return x;
  s.remove_prefix(2);
  size_t n = 0;
  long v = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9' && n < 9) v = v * 10 + (s[n++] - '0');
  if (n == 0) return x;
  x.code = static_cast<int>(v);
  s.remove_prefix(n);
  if (!s.empty() && s[0] == ',') s.remove_prefix(1);
  while (!s.empty() && s[0] == ' ') s.remove_prefix(1);
  x.detail = s;
  return x;
}

}  // namespace

std::optional<XidLine> parse_xid_line(std::string_view line) {
  size_t nvrm = line.find("NVRM:");
  if (nvrm != std::string_view::npos) {
    std::string_view after = line.substr(nvrm + 5);
    // The reference selects lines with `grep NVRM:.Xid` (any one character between) and reads the number with
    // "NVRM: Xid \(...\): (\d+)"; a selected line whose number it cannot read still counts (as XID None).
    if (after.size() >= 4 && after.substr(1, 3) == "Xid") {
      if (after[0] == ' ') return parse_after_keyword(after.substr(4), XidKind::Xid);
      XidLine unreadable;
      unreadable.detail = after;
      return unreadable;
    }
    if (after.find("fallen off the bus") != std::string_view::npos) {
      XidLine x;
      x.code = kXidFallenOffTheBus;
      x.detail = after.substr(after[0] == ' ' ? 1 : 0);
      // "The NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:20b2) installed in this system has fallen off the bus" names the
      // device on the same line on some drivers.
      size_t gpu = after.find("GPU ");
      if (gpu != std::string_view::npos) {
        std::string_view d = after.substr(gpu + 4);
        size_t end = d.find(' ');
        d = d.substr(0, end);
        while (!d.empty() && (d.back() == ':' || d.back() == ',')) d.remove_suffix(1);
        if (d.find(':') != std::string_view::npos) x.device = d;
      }
      return x;
    }
    return std::nullopt;
  }
  size_t sxid = line.find("SXid");
  if (sxid != std::string_view::npos) {
    auto x = parse_after_keyword(line.substr(sxid + 4), XidKind::SXid);
    if (!x || !x->code) return std::nullopt;  // "SXid" in some other text
    x->fatal_hint = x->detail.substr(0, 6) == "Fatal," || x->detail.substr(0, 5) == "Fatal";
    return x;
  }
  return std::nullopt;
}

}  // namespace gcm::health

namespace gcm::health {

std::optional<XidLine> XidLineParser::feed(std::string_view msg) {
  auto x = parse_xid_line(msg);
  if (!x) {
    // Remember a GPU the driver names on the first line of a multi-line message.
    size_t p = msg.find("NVRM: The NVIDIA GPU ");
    if (p != std::string_view::npos) {
      std::string_view d = msg.substr(p + 21);
      last_gpu_named_ = std::string(d.substr(0, d.find(' ')));
    }
    return std::nullopt;
  }
  if (x->device.empty() && x->code == kXidFallenOffTheBus && x->kind == XidKind::Xid) x->device = last_gpu_named_;
  return x;
}

void XidScanner::feed(std::string_view msg) {
  if (auto x = parser_.feed(msg)) add(*x);
}

void XidScanner::add(const XidLine& x) {
  std::string_view device = x.device;
  for (auto& f : findings_) {
    if (f.kind != x.kind || f.code != x.code) continue;
    ++f.count;
    f.fatal_hint = f.fatal_hint || x.fatal_hint;
    if (!device.empty()) {
      bool known = false;
      for (const auto& d : f.devices) known = known || d == device;
      if (!known) f.devices.emplace_back(device);
    }
    return;
  }
  XidFinding f;
  f.kind = x.kind;
  f.code = x.code;
  f.count = 1;
  if (!device.empty()) f.devices.emplace_back(device);
  f.first_detail = std::string(x.detail);
  f.fatal_hint = x.fatal_hint;
  findings_.push_back(std::move(f));
}

}  // namespace gcm::health
