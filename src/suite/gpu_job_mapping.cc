#include "suite/gpu_job_mapping.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "attribution/gpu_jobs.h"
#include "attribution/gpu_list.h"

namespace gcm::suite {

namespace fs = std::filesystem;

std::vector<unsigned> job_gpus_from_environment() {
  for (const char* var : {"SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "GPU_DEVICE_ORDINAL"}) {
    const char* v = std::getenv(var);
    if (v && *v) return parse_gpu_index_list(v);
  }
  return {};
}

void write_mapping_files(const std::string& dir, int64_t job_id, const std::vector<unsigned>& gpus) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create mapping directory '{}': {}", dir, ec.message()));
  for (unsigned gpu : gpus) {
    std::string path = fmt::format("{}/{}", dir, gpu);
    std::string tmp = fmt::format("{}/.{}.{}", dir, gpu, ::getpid());
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << job_id << "\n";
      if (!out.flush()) throw std::runtime_error(fmt::format("cannot write mapping file '{}'", tmp));
    }
    fs::rename(tmp, path, ec);
    if (ec) {
      fs::remove(tmp, ec);
      throw std::runtime_error(fmt::format("cannot write mapping file '{}': {}", path, ec.message()));
    }
  }
}

size_t remove_mapping_files(const std::string& dir, int64_t job_id, const std::vector<unsigned>& gpus) {
  std::vector<unsigned> candidates = gpus;
  std::error_code ec;
  if (candidates.empty()) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      std::string name = e.path().filename().string();
      if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos && name.size() < 6)
        candidates.push_back(static_cast<unsigned>(std::stoul(name)));
    }
  }
  size_t removed = 0;
  for (unsigned gpu : candidates) {
    auto j = job_from_mapping_file(dir, gpu);
    if (!j || j->job_id != job_id) continue;  // another job's GPU now, or no file
    if (fs::remove(fmt::format("{}/{}", dir, gpu), ec)) ++removed;
  }
  return removed;
}

}  // namespace gcm::suite
