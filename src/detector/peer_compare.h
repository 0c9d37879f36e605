// One signal of one job's GPUs compared with each other: each GPU against the median of the OTHER GPUs (leave one
// out, so with few peers a slow GPU does not pull the median towards itself), scaled by their median absolute
// deviation with a floor (robust z-score), after taking out the GPU's own usual deviation (its baseline).
#pragma once

#include <cstddef>
#include <span>

#include "detector/verdict.h"

namespace gcm::detector {

inline constexpr size_t kMaxPeerGroup = 64;

// values[i], baselines[i] for the group's GPUs (at most kMaxPeerGroup, at least 2); fills out[i].
void compare_with_peers(std::span<const double> values, std::span<const double> baselines, double mad_floor,
                        std::span<SignalDeviation> out);

// Median of a small buffer (reorders it). n > 0.
double median_in_place(double* v, size_t n);

}  // namespace gcm::detector
