#include "report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char fz_case[1024];

void fz_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vfprintf(stderr, fmt, ap);
    va_end(ap);
    (void)fputc('\n', stderr);
}

void fz_case_describe(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(fz_case, sizeof fz_case, fmt, ap);
    va_end(ap);
    if (n < 0)
        fz_case[0] = '\0';
}

_Noreturn void fz_fail(const char *fmt, ...)
{
    va_list ap;
    (void)fputs("FUZZ MISMATCH: ", stderr);
    va_start(ap, fmt);
    (void)vfprintf(stderr, fmt, ap);
    va_end(ap);
    (void)fprintf(stderr, "\n  case: %s\n", fz_case);
    (void)fflush(stderr);
    abort();
}

int fz_verbose(void)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("FUZZ_VERBOSE");
        v = (e != NULL && strcmp(e, "0") != 0) ? 1 : 0;
    }
    return v;
}
