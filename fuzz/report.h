/*
 * Failure reports for the harnesses. A differential fuzzer is only useful if a
 * mismatch explains itself, so every check prints the case first (what the
 * harness decoded from the input), then the first differing value, and then
 * aborts: libFuzzer and the replay driver both treat the abort as a finding.
 */
#ifndef RMSNORM_FUZZ_REPORT_H
#define RMSNORM_FUZZ_REPORT_H

#include <stddef.h>

/* printf-style line on stderr, no abort: for the case description. */
void fz_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "FUZZ MISMATCH: <message>", the case description set by
 * fz_case_describe, then aborts. */
_Noreturn void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The case description printed by fz_fail (copied, truncated to 1 KiB). */
void fz_case_describe(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Verbose logging when FUZZ_VERBOSE=1 is set (read once). */
int fz_verbose(void);

#endif /* RMSNORM_FUZZ_REPORT_H */
