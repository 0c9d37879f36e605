// Recognises the kernel-log lines that report GPU faults:
//   "NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus."        (GPU XID)
//   "nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 12028, Non-fatal, Link 32 ..."    (NVSwitch SXid)
//   "NVRM: The NVIDIA GPU 0000:3b:00.0 ... has" + "NVRM: fallen off the bus ..."  (no Xid line: reported as 79)
// Hand-written instead of std::regex: it runs on every line of a kernel log that can be tens of megabytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gcm::health {

enum class XidKind { Xid, SXid };

struct XidLine {
  XidKind kind = XidKind::Xid;
  std::optional<int> code;  // nullopt: an "NVRM:?Xid" line whose number could not be read (the reference: None)
  std::string_view device;  // "PCI:0000:3b:00" (may be empty)
  std::string_view detail;  // the text after the code ("pid=..., GPU has fallen off the bus.")
  bool fatal_hint = false;  // SXid lines say "Fatal" or "Non-fatal"
};

// The GPU XID of the fallen-off-the-bus message without an Xid line.
constexpr int kXidFallenOffTheBus = 79;

std::optional<XidLine> parse_xid_line(std::string_view line);

// parse_xid_line with the one piece of state a kernel log needs across lines: the GPU that "NVRM: The NVIDIA GPU
// <dev> ..." names on the first line of the multi-line fallen-off-the-bus message, given to the XID 79 of a later
// line that names no device. Used by the xid check's scanner and by the agent's kernel-log follower alike.
class XidLineParser {
 public:
  // The XID this kernel message reports, or nullopt. The views point into `msg` or into this parser: valid until
  // the next call.
  std::optional<XidLine> feed(std::string_view msg);

 private:
  std::string last_gpu_named_;
};

}  // namespace gcm::health

#include <string>
#include <vector>

namespace gcm::health {

// Every XID of a log, each distinct (kind, code) once in order of first appearance, with how often and where.
struct XidFinding {
  XidKind kind = XidKind::Xid;
  std::optional<int> code;
  int count = 0;
  std::vector<std::string> devices;  // distinct, in order of appearance
  std::string first_detail;
  bool fatal_hint = false;
};

class XidScanner {
 public:
  void feed(std::string_view kernel_message);
  const std::vector<XidFinding>& findings() const { return findings_; }

 private:
  void add(const XidLine& x);
  std::vector<XidFinding> findings_;
  XidLineParser parser_;
};

}  // namespace gcm::health
