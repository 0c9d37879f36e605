#include <cstring>

#include "gpu/amdsmi_api.h"

namespace gcm::amdsmi {
namespace {

struct NamedStatus {
  Status code;
  const char* name;
};

// The names without the AMDSMI_STATUS_ prefix, as scenarios and messages spell them.
constexpr NamedStatus kStatusNames[] = {
    {STATUS_SUCCESS, "SUCCESS"},
    {STATUS_INVAL, "INVAL"},
    {STATUS_NOT_SUPPORTED, "NOT_SUPPORTED"},
    {STATUS_NOT_YET_IMPLEMENTED, "NOT_YET_IMPLEMENTED"},
    {STATUS_FAIL_LOAD_MODULE, "FAIL_LOAD_MODULE"},
    {STATUS_API_FAILED, "API_FAILED"},
    {STATUS_TIMEOUT, "TIMEOUT"},
    {STATUS_NO_PERM, "NO_PERM"},
    {STATUS_IO, "IO"},
    {STATUS_OUT_OF_RESOURCES, "OUT_OF_RESOURCES"},
    {STATUS_INIT_ERROR, "INIT_ERROR"},
    {STATUS_BUSY, "BUSY"},
    {STATUS_NOT_FOUND, "NOT_FOUND"},
    {STATUS_NOT_INIT, "NOT_INIT"},
    {STATUS_DRIVER_NOT_LOADED, "DRIVER_NOT_LOADED"},
    {STATUS_NO_DATA, "NO_DATA"},
    {STATUS_INSUFFICIENT_SIZE, "INSUFFICIENT_SIZE"},
    {STATUS_UNKNOWN_ERROR, "UNKNOWN_ERROR"},
};

}  // namespace

const char* status_name(Status s) {
  for (const auto& n : kStatusNames)
    if (n.code == s) return n.name;
  return nullptr;
}

int64_t status_from_name(const char* name) {
  if (std::strncmp(name, "AMDSMI_STATUS_", 14) == 0) name += 14;
  for (const auto& n : kStatusNames)
    if (std::strcmp(n.name, name) == 0) return n.code;
  return -1;
}

}  // namespace gcm::amdsmi
