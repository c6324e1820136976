// rms.h: the root mean square, the size the programs print of a tensor, a
// difference or a distance, summed in double.
#pragma once
#include <math.h>
#include <stddef.h>

// sqrt(mean of x²) over n floats; 0 for none.
static inline double rms(const float *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
    return n ? sqrt(s / n) : 0;
}

// The RMS distance of x from ref, rms(x - ref) without the difference's array.
static inline double rms_distance(const float *x, const float *ref, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += ((double)x[i] - ref[i]) * ((double)x[i] - ref[i]);
    return n ? sqrt(s / n) : 0;
}
