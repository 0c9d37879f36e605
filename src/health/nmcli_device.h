// check-ethlink's fallback where /etc/sysconfig/network-scripts/ifcfg-<if> does not exist (CentOS/RHEL 10 dropped
// NetworkManager's ifcfg-rh plugin): the interface's settings from
//   nmcli -t -e no -f GENERAL.HWADDR,GENERAL.DEVICE,GENERAL.TYPE,GENERAL.MTU,GENERAL.STATE,GENERAL.CONNECTION
//         device show <if>
// whose terse form is one "FIELD:value" line per field (with -e no the MAC's colons are not escaped), turned into
// the keys an ifcfg file would give: HWADDR, DEVICE, NAME (the connection, "--" meaning none, else the interface),
// TYPE (capitalised, "ethernet" -> "Ethernet"), MTU, STATE. As GCM: no HWADDR means no usable configuration.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gcm::health {

std::vector<std::string> nmcli_device_show_argv(const std::string& ifname);

std::optional<std::map<std::string, std::string>> parse_nmcli_device_show(std::string_view text,
                                                                          const std::string& ifname);

}  // namespace gcm::health
