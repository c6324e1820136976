// clock.h: the one clock the programs time themselves with, monotonic (it
// never jumps back when the system time is set): only differences between
// two readings mean anything.
#pragma once
#include <time.h>

static inline double wall_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline double now_ms(void) { return 1e3 * wall_seconds(); }
