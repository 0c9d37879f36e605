// The reference's mapping of NVML errors to health-check results (pynvml_errors.py): a GPU that is broken
// (corrupted InfoROM, lost, needs a reset) is CRITICAL; errors of the library or the call are WARNING.
#pragma once

#include "gpu/nvml_api.h"
#include "health/exit_code.h"

namespace gcm::health {

inline ExitCode exit_code_of_nvml_error(nvml::Return r) {
  switch (r) {
    case nvml::ERROR_CORRUPTED_INFOROM:
    case nvml::ERROR_GPU_IS_LOST:
    case nvml::ERROR_RESET_REQUIRED:
      return ExitCode::CRITICAL;
    case nvml::ERROR_UNINITIALIZED:
    case nvml::ERROR_INVALID_ARGUMENT:
    case nvml::ERROR_NOT_SUPPORTED:
    case nvml::ERROR_NO_PERMISSION:
    case nvml::ERROR_ALREADY_INITIALIZED:
    case nvml::ERROR_NOT_FOUND:
    case nvml::ERROR_INSUFFICIENT_SIZE:
    case nvml::ERROR_INSUFFICIENT_POWER:
    case nvml::ERROR_DRIVER_NOT_LOADED:
    case nvml::ERROR_TIMEOUT:
    case nvml::ERROR_IRQ_ISSUE:
    case nvml::ERROR_LIBRARY_NOT_FOUND:
    case nvml::ERROR_FUNCTION_NOT_FOUND:
    case nvml::ERROR_OPERATING_SYSTEM:
    case nvml::ERROR_LIB_RM_VERSION_MISMATCH:
    case nvml::ERROR_MEMORY:
    case nvml::ERROR_UNKNOWN:
      return ExitCode::WARN;
    default:
      return ExitCode::CRITICAL;  // undocumented error
  }
}

}  // namespace gcm::health
