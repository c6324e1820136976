// rng.c: SplitMix64 and Box-Muller (see rng.h for the why).
#include "rng.h"
#include <math.h>
#include "layers.h"   // OMP_MIN_FLOATS

void rng_seed(Rng *r, uint64_t seed) {
    r->state = seed;
    r->has_spare = 0;
    r->spare = 0.0f;
}

// SplitMix64's output for counter value z: a pure function, so draw k of
// a stream can be computed without drawing the k before it.
static uint64_t splitmix_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

#define SPLITMIX_STEP 0x9E3779B97F4A7C15ULL

uint64_t rng_u64(Rng *r) {
    return splitmix_mix(r->state += SPLITMIX_STEP);
}

float rng_uniform(Rng *r) {
    return (float)(rng_u64(r) >> 40) * (1.0f / 16777216.0f);   // 24 bits
}

float rng_uniform_range(Rng *r, float lo, float hi) {
    return lo + (hi - lo) * rng_uniform(r);
}

// Box-Muller: two 64-bit draws -> two independent normals. u1 in (0, 1] so
// the log is finite.
static void box_muller(uint64_t a, uint64_t b, float *first, float *second) {
    double u1 = 1.0 - (double)(a >> 11) * (1.0 / 9007199254740992.0);
    double u2 = (double)(b >> 11) * (1.0 / 9007199254740992.0);
    double rad = sqrt(-2.0 * log(u1));
    double th = 2.0 * M_PI * u2;
    *first = (float)(rad * cos(th));
    *second = (float)(rad * sin(th));
}

float rng_normal(Rng *r) {
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    uint64_t a = rng_u64(r), b = rng_u64(r);
    float first;
    box_muller(a, b, &first, &r->spare);
    r->has_spare = 1;
    return first;
}

uint32_t rng_below(Rng *r, uint32_t n) {
    // Lemire's multiply-shift: unbiased enough for n << 2^32 (we use n <= 50,000).
    return (uint32_t)(((rng_u64(r) >> 32) * (uint64_t)n) >> 32);
}

// The same numbers as n calls of rng_normal, in the same order, but the
// pairs are made on all threads: pair p takes draws 2p+1 and 2p+2 after the
// counter's start, which SplitMix64 can compute directly. On one thread,
// a step's noise (196,608 normals at batch 64, a log, a sqrt, a sin and a
// cos per pair) was a serial pass the other threads waited through.
void rng_fill_normal(Rng *r, float *x, long n, float std) {
    long i = 0;
    if (n > 0 && r->has_spare) x[i++] = std * rng_normal(r);   // the spare of an earlier pair
    long pairs = (n - i) / 2;
    uint64_t start = r->state;
    float *out = x + i;
    #pragma omp parallel for schedule(static) if (pairs > OMP_MIN_FLOATS / 2)
    for (long p = 0; p < pairs; p++) {
        uint64_t a = splitmix_mix(start + (uint64_t)(2 * p + 1) * SPLITMIX_STEP);
        uint64_t b = splitmix_mix(start + (uint64_t)(2 * p + 2) * SPLITMIX_STEP);
        float first, second;
        box_muller(a, b, &first, &second);
        out[2 * p] = std * first;
        out[2 * p + 1] = std * second;
    }
    r->state = start + (uint64_t)(2 * pairs) * SPLITMIX_STEP;
    if (i + 2 * pairs < n) x[n - 1] = std * rng_normal(r);     // an odd one out: keeps its pair's spare
}

void rng_fill_uniform(Rng *r, float *x, long n, float lo, float hi) {
    for (long i = 0; i < n; i++) x[i] = rng_uniform_range(r, lo, hi);
}
