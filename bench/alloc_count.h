// Heap allocations of the process so far: operator new is replaced (in alloc_count.cc, a translation unit of its own
// so that the compiler does not pair the replacement with the standard allocators inlined elsewhere).
#pragma once

#include <cstdint>

uint64_t heap_allocations();
