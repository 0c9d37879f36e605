// AMD GPUs through amdsmi (libamd_smi.so): the GpuBackend over amdsmi_library.h. A GPU is a processor handle of
// amdsmi_get_processor_handles, in socket order (the order amd-smi and ROCR number them). What amdsmi does not have
// (SM clock, fan, persistence, retired pages and remapped rows, PCIe throughput, serial, VBIOS) stays null.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "gpu/amdsmi_library.h"
#include "gpu/gpu_backend.h"

namespace gcm {

class AmdsmiBackend : public GpuBackend {
 public:
  explicit AmdsmiBackend(std::shared_ptr<AmdsmiLibrary> lib) : lib_(std::move(lib)) {}
  const char* vendor() const override { return "amd"; }
  const char* library_name() const override { return "amdsmi"; }
  const std::string& library_path() const override { return lib_->path(); }
  const std::vector<std::string>& missing_symbols() const override { return lib_->missing_symbols(); }
  // Enumerates the GPUs (sockets, then each socket's processors) and reads the driver version of the first.
  void probe(CallWatch& watch, GpuProbe& out) override;
  [[noreturn]] void unavailable(const std::string& what) const override;
  // Whether the handle of the probe was used yet: a later look-up (after a failure, as after a GPU reset)
  // enumerates again, since a reset GPU may get a new handle.
  std::shared_ptr<void> new_device_state(unsigned index, bool extended) override;
  void sample(unsigned index, CallWatch& watch, const SampleScope& scope, void* device_state,
              GpuJobResult& out) override;
  const std::shared_ptr<AmdsmiLibrary>& library() const { return lib_; }

 private:
  std::shared_ptr<AmdsmiLibrary> lib_;
  std::mutex m_;
  std::vector<amdsmi::ProcessorHandle> probed_;  // the handles the probe found, by index
};

// The GPU processor handles of the host, in socket order; false (with *error) when the enumeration failed.
// *calls counts the calls made.
bool enumerate_amd_gpus(const AmdsmiLibrary& lib, CallWatch& watch, std::vector<amdsmi::ProcessorHandle>& out,
                        std::string* error, int64_t* calls = nullptr);

}  // namespace gcm
