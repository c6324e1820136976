// rng.c: SplitMix64 and Box-Muller (see rng.h for the why).
#include "rng.h"
#include <math.h>

void rng_seed(Rng *r, uint64_t seed) {
    r->state = seed;
    r->has_spare = 0;
    r->spare = 0.0f;
}

uint64_t rng_u64(Rng *r) {
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

float rng_uniform(Rng *r) {
    return (float)(rng_u64(r) >> 40) * (1.0f / 16777216.0f);   // 24 bits
}

float rng_uniform_range(Rng *r, float lo, float hi) {
    return lo + (hi - lo) * rng_uniform(r);
}

float rng_normal(Rng *r) {
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    // Box-Muller: two uniforms -> two independent normals. u1 in (0, 1] so
    // the log is finite.
    double u1 = 1.0 - (double)(rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
    double u2 = (double)(rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
    double rad = sqrt(-2.0 * log(u1));
    double th = 2.0 * M_PI * u2;
    r->spare = (float)(rad * sin(th));
    r->has_spare = 1;
    return (float)(rad * cos(th));
}

uint32_t rng_below(Rng *r, uint32_t n) {
    // Lemire's multiply-shift: unbiased enough for n << 2^32 (we use n <= 50,000).
    return (uint32_t)(((rng_u64(r) >> 32) * (uint64_t)n) >> 32);
}

void rng_fill_normal(Rng *r, float *x, long n, float std) {
    for (long i = 0; i < n; i++) x[i] = std * rng_normal(r);
}

void rng_fill_uniform(Rng *r, float *x, long n, float lo, float hi) {
    for (long i = 0; i < n; i++) x[i] = rng_uniform_range(r, lo, hi);
}
