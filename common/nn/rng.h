// rng.h: the project's one random number generator.
//
// Algorithm: SplitMix64 (Steele, Lea & Flood, 2014), a 64-bit counter stepped
// by the golden-ratio constant and mixed by two xor-shift-multiply rounds.
// Uniform floats take the top 24 bits (exactly representable in [0, 1)).
// Normals use Box-Muller on two uniforms, caching the second value.
// The stream is drawn in a fixed order, so the same seed gives the same
// numbers whatever the OpenMP thread count; rng_fill_normal spreads a long
// fill over the threads by computing each pair's draws from the counter.
#pragma once
#include <stdint.h>

typedef struct {
    uint64_t state;
    int has_spare;      // Box-Muller makes normals in pairs
    float spare;
} Rng;

void rng_seed(Rng *r, uint64_t seed);
uint64_t rng_u64(Rng *r);
float rng_uniform(Rng *r);                  // [0, 1)
float rng_uniform_range(Rng *r, float lo, float hi);
float rng_normal(Rng *r);                   // N(0, 1)
uint32_t rng_below(Rng *r, uint32_t n);     // uniform integer in [0, n)
void rng_fill_normal(Rng *r, float *x, long n, float std);
void rng_fill_uniform(Rng *r, float *x, long n, float lo, float hi);
