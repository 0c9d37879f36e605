#include "core/gzip.h"

#include <zlib.h>

#include <stdexcept>

#include <fmt/format.h>

namespace gcm {

std::string gzip_compress(std::string_view data) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string out;
  out.resize(deflateBound(&zs, data.size()) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("gzip compression failed");
  out.resize(zs.total_out);
  return out;
}

std::string inflate_bounded(std::string_view data, size_t limit) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw std::runtime_error("inflateInit2 failed");  // 32: gzip or zlib
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[65536];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      throw std::runtime_error(zs.avail_in == 0 ? "truncated gzip data" : "invalid gzip data");
    }
    out.append(buf, sizeof buf - zs.avail_out);
    if (out.size() > limit) {
      inflateEnd(&zs);
      throw std::length_error(fmt::format("the body inflates to more than {} bytes", limit));
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace gcm
