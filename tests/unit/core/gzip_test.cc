// core/gzip: the one inflater of the HTTP bodies (slurm_processor's receivers, the tests' OTLP receivers).
#include "core/gzip.h"

#include <zlib.h>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace gcm {
namespace {

TEST(Gzip, RoundTripsAndInflatesZlibToo) {
  std::string text;
  for (int i = 0; i < 10000; ++i) text += "line " + std::to_string(i) + "\n";
  std::string gz = gzip_compress(text);
  EXPECT_LT(gz.size(), text.size());
  EXPECT_EQ(inflate_bounded(gz, text.size()), text);  // exactly at the limit is within it
  EXPECT_EQ(inflate_bounded(gzip_compress(""), 0), "");
  // Content-Encoding: deflate is the zlib format.
  uLongf n = compressBound(static_cast<uLong>(text.size()));
  std::string z(n, '\0');
  ASSERT_EQ(compress(reinterpret_cast<Bytef*>(z.data()), &n, reinterpret_cast<const Bytef*>(text.data()),
                     static_cast<uLong>(text.size())),
            Z_OK);
  z.resize(n);
  EXPECT_EQ(inflate_bounded(z, 1 << 20), text);
}

TEST(Gzip, StopsPastTheLimitWithALengthError) {
  std::string zeros(8 << 20, '\0');
  std::string gz = gzip_compress(zeros);
  EXPECT_LT(gz.size(), 64u * 1024);
  try {
    inflate_bounded(gz, 1 << 20);
    FAIL() << "no length_error";
  } catch (const std::length_error& e) {
    EXPECT_NE(std::string(e.what()).find("inflates to more than 1048576 bytes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(inflate_bounded(gzip_compress("12345"), 4), std::length_error);
}

TEST(Gzip, BadOrTruncatedDataIsARuntimeError) {
  try {
    inflate_bounded("not gzip", 1 << 20);
    FAIL() << "no error";
  } catch (const std::length_error&) {
    FAIL() << "a length_error for bad data";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "invalid gzip data");
  }
  std::string gz = gzip_compress(std::string(1000, 'x'));
  try {
    inflate_bounded(gz.substr(0, gz.size() / 2), 1 << 20);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "truncated gzip data");
  }
}

}  // namespace
}  // namespace gcm
