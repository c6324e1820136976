// errors.h: how the library reports a problem. Functions that can fail take
// a caller's buffer (char *err, size_t errlen), write one sentence into it
// naming the file or value and what is wrong, and return -1; they never
// print or exit, so each program decides how to tell its user.
#pragma once
#include <stddef.h>

// printf into err (if err is not NULL and errlen > 0). Always returns -1, so
// that a failing function can `return errorf(err, errlen, "...", ...);`.
int errorf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
