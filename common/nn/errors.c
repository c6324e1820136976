// errors.c: see errors.h.
#include <stdarg.h>
#include <stdio.h>
#include "errors.h"

int errorf(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}
