#include "core/retry.h"

#include <algorithm>
#include <cmath>

namespace gcm {

double RetryPolicy::delay_for(int retry_index) const {
  return std::min(max_backoff_s, initial_backoff_s * std::pow(multiplier, retry_index));
}

}  // namespace gcm
