/*
** compiler.h — the few compiler annotations the code base uses, spelled once.
**
** Owns: DP_PRINTF (printf-style argument checking), which expands to nothing
** on compilers without GNU attributes.
*/
#ifndef DP_COMPILER_H
#define DP_COMPILER_H

/* The function's argument `fmt` (1-based) is a printf format whose values
** start at argument `first` (0: a va_list). */
#if defined(__GNUC__)
#define DP_PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#define DP_PRINTF(fmt, first)
#endif

#endif /* DP_COMPILER_H */
