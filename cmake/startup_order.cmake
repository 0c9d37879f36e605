# The start-up code of gcm in one place of the binary. A health check, a prolog step or `--help` runs for a few
# milliseconds, and most of its resident memory was the executable's text: the code it runs (static initialisers,
# the command registry, option parsing, the check) is spread over the whole 6 MiB of .text, and each page fault maps
# the 64 KiB around it, so `health_checks check-process check-zombie` had 5.6 MiB of the binary resident (7.7 MiB in
# all). Every function is compiled into its own section (-ffunction-sections) and lld lays out the functions that
# start-up runs first and together, in the order of cmake/startup_order.txt (mangled names, one per line, written by
# scripts/startup-order.sh from callgrind runs of those commands, the check's first): 3.4-3.5 MiB in all for
# that check, 3.1 MiB for `gcm --help`, with protobuf's registrations deferred (bench/README.md, "Start-up floors"). This file is included before the libraries
# are defined, so that the bundled third-party code gets function sections too.
#
# A stale list only costs memory, never correctness: a name that no longer exists is skipped, a new function is
# placed with the rest. The test startup_order_names fails when most of the list no longer names functions of gcm.
#
# With lld 15 or later gcm's relative relocations are also packed (-z pack-relative-relocs, DT_RELR, which glibc
# reads since 2.36): 316 KiB of .rela.dyn, read whole by the loader at every start, become 2 KiB of .relr.dyn
# (-340 KiB resident for each check). GCC has no option naming the linker's path, so a directory holding `ld.lld`
# for the chosen lld is put first in its search path (-B).
#
# Provides gcm_startup_order(<target>). Off without lld (a warning says so), and in the sanitizer and fuzz builds.
option(GCM_STARTUP_ORDER "Lay out gcm's start-up functions together (needs lld)" ON)
if(GCM_SANITIZE OR GCM_FUZZ)
  set(GCM_STARTUP_ORDER OFF)
endif()
set(GCM_STARTUP_ORDER_FILE ${PROJECT_SOURCE_DIR}/cmake/startup_order.txt)
if(GCM_STARTUP_ORDER)
  find_program(GCM_LLD_PROGRAM NAMES ld.lld-16 ld.lld-15 ld.lld)
  if(NOT GCM_LLD_PROGRAM)
    message(WARNING "ld.lld not found (Debian package lld-16): gcm is linked without its start-up order")
    set(GCM_STARTUP_ORDER OFF)
  else()
    add_compile_options("$<$<COMPILE_LANGUAGE:CXX,C>:-ffunction-sections>")
    set(GCM_LLD_DIR ${CMAKE_BINARY_DIR}/lld)
    file(MAKE_DIRECTORY ${GCM_LLD_DIR})
    file(CREATE_LINK ${GCM_LLD_PROGRAM} ${GCM_LLD_DIR}/ld.lld SYMBOLIC)
    # Static initialisers in an output section of their own (.text.startup; .text.unlikely and .text.exit likewise):
    # every one of them runs at each start, and their names are not stable. In a unity build the initialiser of a
    # batch is named after the batch's first symbol, and a file added anywhere renames the batches after it, so the
    # list names some that no longer exist: five such names left the check's initialisers scattered over .text,
    # +1.1 MiB resident (5.1 against 4.0 MiB; with this option a list that stale costs +0.2 MiB).
    set(GCM_LLD_OPTIONS -B${GCM_LLD_DIR}/ -fuse-ld=lld "LINKER:-z,keep-text-section-prefix")
    # Packed relocations only where this lld writes them and this C library loads them: a program linked so must run.
    include(CheckCSourceRuns)
    # (lld 14 only warns of an unknown -z value: warnings are fatal here.)
    set(CMAKE_REQUIRED_LINK_OPTIONS ${GCM_LLD_OPTIONS} "LINKER:-z,pack-relative-relocs" "LINKER:--fatal-warnings" -pie)
    set(CMAKE_REQUIRED_FLAGS -fPIE)
    check_c_source_runs("static int x; static int *p = &x; int main(void) { return p != &x; }" GCM_LLD_RELR)
    unset(CMAKE_REQUIRED_LINK_OPTIONS)
    unset(CMAKE_REQUIRED_FLAGS)
    if(GCM_LLD_RELR)
      list(APPEND GCM_LLD_OPTIONS "LINKER:-z,pack-relative-relocs")
    else()
      message(STATUS "${GCM_LLD_PROGRAM} or the C library cannot pack relative relocations: gcm keeps .rela.dyn")
    endif()
  endif()
endif()

# With every function in a section of its own, the link also drops the sections nothing reaches (--gc-sections):
# code and vtables of the static libraries that gcm never calls. .data.rel.ro, which the loader writes whole at
# every start (a page fault per 4 KiB page), falls from 117 to 103 KiB, .text from 5.8 to 5.0 MiB.
function(gcm_startup_order target)
  if(GCM_STARTUP_ORDER)
    target_link_options(${target} PRIVATE ${GCM_LLD_OPTIONS} "LINKER:--symbol-ordering-file=${GCM_STARTUP_ORDER_FILE}"
                        "LINKER:--no-warn-symbol-ordering" "LINKER:--gc-sections")
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${GCM_STARTUP_ORDER_FILE})
  endif()
endfunction()
