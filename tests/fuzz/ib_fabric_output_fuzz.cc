// libFuzzer: the readers of the InfiniBand fabric tools (ibdiagnet's PM and ibnetdiscover files, mlxlink,
// mlxcables, sminfo, UFM's dump) and of `nmcli device show` never crash or throw on arbitrary input and always give
// a verdict with a message.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "health/ib_fabric_output.h"
#include "health/nmcli_device.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using gcm::health::ExitCode;
  auto check = [](const gcm::health::FabricVerdict& v) {
    if (v.code == ExitCode::UNKNOWN || v.msg.empty()) std::abort();
  };
  // The first NUL splits the input into the PM file and the ibnetdiscover file.
  size_t nul = text.find('\0');
  std::string_view pm = text.substr(0, nul), discover = nul == std::string_view::npos ? "" : text.substr(nul + 1);
  check(gcm::health::evaluate_ibdiagnet_pm(pm, discover, 0));
  check(gcm::health::evaluate_ibdiagnet_pm(pm, discover, -1));
  std::vector<std::string> issues;
  ExitCode c = gcm::health::evaluate_mlxlink_module("d", text, 0, {}, issues);
  if (c == ExitCode::UNKNOWN || (c != ExitCode::OK && issues.empty())) std::abort();
  check(gcm::health::evaluate_mlxcables_ddm("d", text, 0));
  check(gcm::health::evaluate_sminfo(text, 0));
  check(gcm::health::evaluate_ufm_unhealthy_ports(text));
  if (auto cfg = gcm::health::parse_nmcli_device_show(text, "eth0"))
    if (cfg->at("HWADDR").empty()) std::abort();
  return 0;
}

const bool kIbFabricOutputFuzzRegistered = gcm::fuzz::register_target("ib_fabric_output_fuzz", fuzz_one);

}  // namespace
