#include "detector/peer_compare.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace gcm::detector {

double median_in_place(double* v, size_t n) {
  size_t mid = n / 2;
  std::nth_element(v, v + mid, v + n);
  double hi = v[mid];
  if (n % 2 == 1) return hi;
  double lo = *std::max_element(v, v + mid);
  return (lo + hi) / 2;
}

void compare_with_peers(std::span<const double> values, std::span<const double> baselines, double mad_floor,
                        std::span<SignalDeviation> out) {
  const size_t n = std::min(values.size(), kMaxPeerGroup);
  // 1.4826 * MAD estimates the standard deviation of normal data.
  constexpr double kMadToSigma = 1.4826;
  std::array<double, kMaxPeerGroup> others{};
  for (size_t i = 0; i < n; ++i) {
    size_t m = 0;
    for (size_t j = 0; j < n; ++j) {
      if (j != i) others[m++] = values[j];
    }
    double med = median_in_place(others.data(), m);
    for (size_t j = 0; j < m; ++j) others[j] = std::fabs(others[j] - med);
    double mad = median_in_place(others.data(), m);
    SignalDeviation& d = out[i];
    d.evaluated = med > 0;
    if (!d.evaluated) continue;
    d.value = values[i];
    d.peer_median = med;
    d.baseline = baselines[i];
    d.raw_deviation = values[i] / med - 1;
    double corrected = values[i] / (1 + baselines[i]);
    d.deviation = corrected / med - 1;
    double scale = std::max(kMadToSigma * mad, mad_floor * med);
    d.zscore = (corrected - med) / scale;
  }
}

}  // namespace gcm::detector
