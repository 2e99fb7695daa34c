// Inlining hints for the hottest body routines (docs/performance.md, issue 17, session 29: the joint
// block and the bodies' prediction were calls per body and substep). They change no operation, only
// where the code sits. Under the sanitizers (and unoptimised builds) they are left out: with the
// instrumentation, inlining everything into one routine made GCC take over ten minutes on joints.cpp.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__OPTIMIZE__)
#define PLIANT_FLATTEN
#define PLIANT_ALWAYS_INLINE
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PLIANT_FLATTEN
#define PLIANT_ALWAYS_INLINE
#endif
#endif

#ifndef PLIANT_FLATTEN
#define PLIANT_FLATTEN [[gnu::flatten]]
#define PLIANT_ALWAYS_INLINE __attribute__((always_inline))
#endif
