// args.c: see args.h.
#include "args.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int parse_int_in(const char *s, long lo, long hi, int *out) {
    if (!s || !*s) return -1;
    if (lo < INT_MIN) lo = INT_MIN;
    if (hi > INT_MAX) hi = INT_MAX;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != 0 || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

int is_help_option(const char *a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }
