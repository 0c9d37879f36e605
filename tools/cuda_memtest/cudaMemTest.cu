// cudaMemTest: allocates a share of one GPU's memory and tests it. The command line and the lines it prints are the
// ones GCM's `cuda memtest` check expects (--device=N, --alloc_mem_gb=K; "CUDA memory test PASSED", exit 0/1).
// Unlike GCM's program, which only allocates and memsets, it writes an address-dependent pattern and its complement
// with a kernel and reads both back, so a stuck or flipping bit is found, not just an allocation failure.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

__global__ void fill(unsigned long long* p, size_t n, unsigned long long salt) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = (i * 0x9E3779B97F4A7C15ull) ^ salt;
}

__global__ void verify(const unsigned long long* p, size_t n, unsigned long long salt,
                       unsigned long long* mismatches) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    local += p[i] != ((i * 0x9E3779B97F4A7C15ull) ^ salt);
  if (local) atomicAdd(mismatches, local);
}

void usage(const char* self) {
  std::printf("Usage: %s --device=N [--alloc_mem_gb=K]\n"
              "  --device=N        the CUDA device to test (required)\n"
              "  --alloc_mem_gb=K  GB (10^9 bytes) to allocate and test, default 1, at most 90%% of free memory\n",
              self);
}

int fail(const char* what, cudaError_t e) {
  std::fprintf(stderr, "Test failed: %s: %s\n", what, cudaGetErrorString(e));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int device = -1;
  long long gb = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--device=", 9) == 0) {
      device = std::atoi(argv[i] + 9);
    } else if (std::strncmp(argv[i], "--alloc_mem_gb=", 15) == 0) {
      gb = std::atoll(argv[i] + 15);
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-?") == 0) {
      usage(argv[0]);
      return 0;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      usage(argv[0]);
      return 1;
    }
  }
  if (device < 0) {
    usage(argv[0]);
    return 0;
  }
  if (gb <= 0) gb = 1;
  if (cudaSetDevice(device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    std::printf("Invalid device id or device already in use\n");
    return 1;
  }
  size_t free_b = 0, total_b = 0;
  cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
  if (e != cudaSuccess) return fail("cudaMemGetInfo", e);
  std::printf("free mem %zu total mem %zu\n", free_b, total_b);
  size_t bytes = static_cast<size_t>(gb) * 1000000000ull;
  size_t cap = free_b / 10 * 9;
  if (bytes > cap) bytes = cap;
  std::printf("alloc %lld\n", gb);
  size_t n = bytes / sizeof(unsigned long long);
  unsigned long long* p = nullptr;
  unsigned long long* mism = nullptr;
  if ((e = cudaMalloc(&p, n * sizeof *p)) != cudaSuccess) return fail("cudaMalloc", e);
  if ((e = cudaMalloc(&mism, sizeof *mism)) != cudaSuccess) return fail("cudaMalloc", e);
  if ((e = cudaMemset(p, 0xf, n * sizeof *p)) != cudaSuccess) return fail("cudaMemset", e);
  unsigned long long total_bad = 0;
  for (unsigned long long salt : {0ull, ~0ull}) {  // a pattern and its complement: every bit is written 0 and 1
    cudaMemset(mism, 0, sizeof *mism);
    fill<<<1024, 256>>>(p, n, salt);
    verify<<<1024, 256>>>(p, n, salt, mism);
    if ((e = cudaDeviceSynchronize()) != cudaSuccess) return fail("kernel", e);
    unsigned long long bad = 0;
    if ((e = cudaMemcpy(&bad, mism, sizeof bad, cudaMemcpyDeviceToHost)) != cudaSuccess) return fail("cudaMemcpy", e);
    total_bad += bad;
  }
  cudaFree(mism);
  if ((e = cudaFree(p)) != cudaSuccess) return fail("cudaFree", e);
  if (total_bad) {
    std::fprintf(stderr, "Test failed: %llu of %zu words read back wrong\n", total_bad, n * 2);
    return 1;
  }
  std::printf("CUDA memory test PASSED\n");
  return 0;
}
