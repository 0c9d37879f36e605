// toml++'s out-of-line code, compiled into our binaries instead of loading libtomlplusplus.so (see
// cmake/static_deps.cmake). toml++ is built for exactly this: every unit sees TOML_HEADER_ONLY=0 and one unit defines
// TOML_IMPLEMENTATION.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
