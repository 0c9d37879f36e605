# The start-up code of gcm in one place of the binary. A health check, a prolog step or `--help` runs for a few
# milliseconds, and most of its resident memory was the executable's text: the code it runs (static initialisers,
# the command registry, option parsing, the check) is spread over the whole 6 MiB of .text, and each page fault maps
# the 64 KiB around it, so `health_checks check-process check-zombie` had 5.6 MiB of the binary resident (7.7 MiB in
# all). Every function is compiled into its own section (-ffunction-sections) and lld lays out the functions that
# start-up runs first and together, in the order of cmake/startup_order.txt (mangled names, one per line, written by
# scripts/startup-order.sh from callgrind runs of those commands): 4.1 MiB in all for that check, 3.9 MiB for
# `gcm --help` (bench/README.md, "Start-up floors").
#
# A stale list only costs memory, never correctness: a name that no longer exists is skipped, a new function is
# placed with the rest. The test startup_order_names fails when most of the list no longer names functions of gcm.
#
# Provides gcm_startup_order(<target>). Off without lld (a warning says so), and in the sanitizer and fuzz builds.
option(GCM_STARTUP_ORDER "Lay out gcm's start-up functions together (needs lld)" ON)
if(GCM_SANITIZE OR GCM_FUZZ)
  set(GCM_STARTUP_ORDER OFF)
endif()
set(GCM_STARTUP_ORDER_FILE ${PROJECT_SOURCE_DIR}/cmake/startup_order.txt)
if(GCM_STARTUP_ORDER)
  find_program(GCM_LLD NAMES ld.lld)
  if(NOT GCM_LLD)
    message(WARNING "ld.lld not found (Debian package lld): gcm is linked without its start-up order")
    set(GCM_STARTUP_ORDER OFF)
  else()
    add_compile_options("$<$<COMPILE_LANGUAGE:CXX,C>:-ffunction-sections>")
  endif()
endif()

function(gcm_startup_order target)
  if(GCM_STARTUP_ORDER)
    target_link_options(${target} PRIVATE -fuse-ld=lld "LINKER:--symbol-ordering-file=${GCM_STARTUP_ORDER_FILE}"
                        "LINKER:--no-warn-symbol-ordering")
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${GCM_STARTUP_ORDER_FILE})
  endif()
endfunction()
