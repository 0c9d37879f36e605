// Which lock guards a member, written where the member is declared, in the manner of leveldb's and Abseil's
// GUARDED_BY. Clang checks them with -Wthread-safety where the mutex type is annotated too; GCC, the project's
// compiler, reads them as documentation. A member no lock guards says in a comment which thread owns it.
#pragma once

#if defined(__clang__)
#define GCM_GUARDED_BY(x) __attribute__((guarded_by(x)))
#else
#define GCM_GUARDED_BY(x)
#endif
