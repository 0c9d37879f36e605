// gzip for the HTTP bodies: compressing what the OTLP exporter sends, inflating what slurm_processor receives (and
// what the tests' receivers got). One inflater, bounded, because a few KiB of gzip can inflate to gigabytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gcm {

// gzip-compresses data (Content-Encoding: gzip).
std::string gzip_compress(std::string_view data);

// Inflates gzip or zlib ("deflate") data. Throws std::length_error once the output passes `limit` bytes (it stops
// there, without inflating the rest) and std::runtime_error on invalid or truncated data.
std::string inflate_bounded(std::string_view data, size_t limit);

}  // namespace gcm
