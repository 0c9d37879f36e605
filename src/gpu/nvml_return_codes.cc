#include <cstring>

#include "gpu/nvml_api.h"

namespace gcm::nvml {
namespace {

struct Named {
  Return code;
  const char* name;
};

constexpr Named kNames[] = {
    {SUCCESS, "SUCCESS"},
    {ERROR_UNINITIALIZED, "UNINITIALIZED"},
    {ERROR_INVALID_ARGUMENT, "INVALID_ARGUMENT"},
    {ERROR_NOT_SUPPORTED, "NOT_SUPPORTED"},
    {ERROR_NO_PERMISSION, "NO_PERMISSION"},
    {ERROR_ALREADY_INITIALIZED, "ALREADY_INITIALIZED"},
    {ERROR_NOT_FOUND, "NOT_FOUND"},
    {ERROR_INSUFFICIENT_SIZE, "INSUFFICIENT_SIZE"},
    {ERROR_INSUFFICIENT_POWER, "INSUFFICIENT_POWER"},
    {ERROR_DRIVER_NOT_LOADED, "DRIVER_NOT_LOADED"},
    {ERROR_TIMEOUT, "TIMEOUT"},
    {ERROR_IRQ_ISSUE, "IRQ_ISSUE"},
    {ERROR_LIBRARY_NOT_FOUND, "LIBRARY_NOT_FOUND"},
    {ERROR_FUNCTION_NOT_FOUND, "FUNCTION_NOT_FOUND"},
    {ERROR_CORRUPTED_INFOROM, "CORRUPTED_INFOROM"},
    {ERROR_GPU_IS_LOST, "GPU_IS_LOST"},
    {ERROR_RESET_REQUIRED, "RESET_REQUIRED"},
    {ERROR_OPERATING_SYSTEM, "OPERATING_SYSTEM"},
    {ERROR_LIB_RM_VERSION_MISMATCH, "LIB_RM_VERSION_MISMATCH"},
    {ERROR_IN_USE, "IN_USE"},
    {ERROR_MEMORY, "MEMORY"},
    {ERROR_NO_DATA, "NO_DATA"},
    {ERROR_UNKNOWN, "UNKNOWN"},
};

}  // namespace

const char* return_code_name(Return r) {
  for (const auto& n : kNames)
    if (n.code == r) return n.name;
  return "";
}

Return return_code_from_name(const char* name) {
  if (std::strncmp(name, "NVML_ERROR_", 11) == 0) name += 11;
  for (const auto& n : kNames)
    if (std::strcmp(n.name, name) == 0) return n.code;
  return -1;
}

}  // namespace gcm::nvml
