# Static C++ dependencies. Every health check, prolog and collector round starts a process, and with Debian's shared
# libprotobuf, libstdc++, libfmt, libspdlog and libtomlplusplus half of a `health_checks` start-up was the dynamic
# loader binding about 5,500 symbols, and 6 MiB of its resident memory was those libraries' pages. Linked statically,
# only the code the program uses is loaded and nothing is bound at start.
#
# The sanitizer and fuzz builds keep the shared libraries: their runtimes expect one libstdc++, and speed is not
# their point. The test programs keep the shared libstdc++ because libgtest is a shared C++ library.
#
# zlib is a C library without initialisers, linked from its archive as well: as a shared library it was one more
# object for the loader to map, relocate and search for every symbol, and 18 page faults of each start-up.
#
# Provides GCM_PROTOBUF, GCM_FMT, GCM_SPDLOG, GCM_TOML and GCM_ZLIB (targets to link) and gcm_static_runtime(<target>)
# for executables.
option(GCM_STATIC_DEPS "Link protobuf, fmt, spdlog, toml++ and libstdc++ statically into gcm" ON)
if(GCM_SANITIZE OR GCM_FUZZ)
  set(GCM_STATIC_DEPS OFF)
endif()

find_package(Protobuf REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)

if(GCM_STATIC_DEPS)
  # Debian ships fmt, spdlog and toml++ as shared libraries plus the headers of their header-only modes: their
  # implementation is compiled here once (src/third_party/), and every unit sees the compiled-library declarations.
  add_library(gcm_third_party STATIC
    ${PROJECT_SOURCE_DIR}/src/third_party/fmt_impl.cc
    ${PROJECT_SOURCE_DIR}/src/third_party/spdlog_impl.cc
    ${PROJECT_SOURCE_DIR}/src/third_party/tomlplusplus_impl.cc)
  target_compile_definitions(gcm_third_party PUBLIC SPDLOG_COMPILED_LIB SPDLOG_FMT_EXTERNAL TOML_HEADER_ONLY=0)
  target_compile_options(gcm_third_party PRIVATE -w)
  target_link_libraries(gcm_third_party PUBLIC Threads::Threads)
  # The archive is looked up by its own name: FindProtobuf caches the library it found first, so a build directory
  # configured before would keep the shared one (and with it a second libstdc++ in the process).
  find_library(GCM_PROTOBUF_ARCHIVE NAMES libprotobuf.a REQUIRED)
  add_library(gcm_protobuf INTERFACE)
  target_include_directories(gcm_protobuf SYSTEM INTERFACE ${Protobuf_INCLUDE_DIRS})
  find_library(GCM_ZLIB_ARCHIVE NAMES libz.a REQUIRED)
  add_library(gcm_zlib INTERFACE)
  target_include_directories(gcm_zlib SYSTEM INTERFACE ${ZLIB_INCLUDE_DIRS})
  target_link_libraries(gcm_zlib INTERFACE ${GCM_ZLIB_ARCHIVE})
  set(GCM_ZLIB gcm_zlib)
  target_link_libraries(gcm_protobuf INTERFACE ${GCM_PROTOBUF_ARCHIVE} gcm_zlib Threads::Threads)
  set(GCM_PROTOBUF gcm_protobuf)
  set(GCM_FMT gcm_third_party)
  set(GCM_SPDLOG gcm_third_party)
  set(GCM_TOML gcm_third_party)
else()
  set(GCM_PROTOBUF protobuf::libprotobuf)
  set(GCM_FMT fmt::fmt)
  set(GCM_SPDLOG spdlog::spdlog)
  set(GCM_TOML tomlplusplus::tomlplusplus)
  set(GCM_ZLIB ZLIB::ZLIB)
endif()

# libstdc++ and libgcc into the executable as well. Only for programs whose every C++ library is static: a shared
# C++ library (libgtest, libbenchmark) would bring a second libstdc++. Modules dlopen'ed later (the gRPC transport,
# libnvidia-ml) have C interfaces and their own libstdc++, which the executable does not export to them.
function(gcm_static_runtime target)
  if(GCM_STATIC_DEPS)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  endif()
endfunction()
