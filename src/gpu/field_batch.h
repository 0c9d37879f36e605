// Several NVML field values of one GPU in one nvmlDeviceGetFieldValues call instead of one getter call each
// (on real hardware every NVML call costs a driver round trip). Each field has its own return code; a caller falls
// back to the field's own getter when the batch or the field gave nothing, so the values never differ from the
// getters' (see sample_device.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gpu/nvml_caller.h"

namespace gcm {

class FieldBatch {
 public:
  // Adds a field to ask for; returns its index for value().
  size_t add(unsigned field_id, unsigned scope_id = 0);
  bool empty() const { return fields_.empty(); }
  // The one call. False when the call itself failed (no driver support: every value() is then nullopt).
  bool fetch(Caller& c, const nvml::Api& a, nvml::Device d);
  // The field's value, or nullopt when the batch or the field failed. A field that answers GPU_IS_LOST throws.
  std::optional<uint64_t> value(size_t i, Caller& c) const;
  // The field's own return code (ERROR_UNINITIALIZED before a successful fetch).
  nvml::Return field_return(size_t i) const;

 private:
  std::vector<nvml::FieldValue> fields_;
  bool fetched_ = false;
};

}  // namespace gcm
