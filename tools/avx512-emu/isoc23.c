/* The two C23 names of glibc 2.38 that the bochscpu-python wheel links
 * against, for glibc 2.36 (Debian 12), preloaded into run.py. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

unsigned long long __isoc23_strtoull(const char *s, char **end, int base) { return strtoull(s, end, base); }

int __isoc23_sscanf(const char *s, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = vsscanf(s, format, ap);
    va_end(ap);
    return n;
}
