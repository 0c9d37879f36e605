#include "gpu/field_batch.h"

namespace gcm {

size_t FieldBatch::add(unsigned field_id, unsigned scope_id) {
  nvml::FieldValue f{};
  f.field_id = field_id;
  f.scope_id = scope_id;
  fields_.push_back(f);
  return fields_.size() - 1;
}

bool FieldBatch::fetch(Caller& c, const nvml::Api& a, nvml::Device d) {
  if (fields_.empty()) return false;
  fetched_ =
      c.call("nvmlDeviceGetFieldValues", a.DeviceGetFieldValues, d, static_cast<int>(fields_.size()), fields_.data());
  return fetched_;
}

nvml::Return FieldBatch::field_return(size_t i) const {
  return fetched_ && i < fields_.size() ? fields_[i].nvml_return : nvml::ERROR_UNINITIALIZED;
}

std::optional<uint64_t> FieldBatch::value(size_t i, Caller& c) const {
  nvml::Return rc = field_return(i);
  if (rc == nvml::ERROR_GPU_IS_LOST) c.check("nvmlDeviceGetFieldValues", rc);  // throws GpuLost
  if (rc != nvml::SUCCESS) return std::nullopt;
  const nvml::FieldValue& f = fields_[i];
  switch (f.value_type) {
    case nvml::VALUE_DOUBLE:
      return f.value.d >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(f.value.d)) : std::nullopt;
    case nvml::VALUE_UINT:
      return f.value.ui;
    case nvml::VALUE_ULONG:
      return f.value.ul;
    case nvml::VALUE_ULL:
      return f.value.ull;
    case nvml::VALUE_SLL:
      return f.value.sll >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(f.value.sll)) : std::nullopt;
    case nvml::VALUE_SINT:
      return f.value.si >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(f.value.si)) : std::nullopt;
    default:
      return std::nullopt;  // a type this build does not know
  }
}

}  // namespace gcm
