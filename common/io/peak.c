// peak.c: the FMA peak loop (see peak.h).
#include "peak.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

// One vector type and its three operations, for the widest instruction set
// the compiler targets. Intrinsics, not `a * b + c`: that becomes an FMA only
// if the compiler is allowed to fuse (-ffp-contract), and the loop must
// measure FMAs under any build flags.
#if defined(__AVX512F__)
typedef __m512 Vec;
#define VEC_LANES 16
#define VEC_ISA "AVX-512 (16 floats)"
#define vec_set1 _mm512_set1_ps
#define vec_load _mm512_loadu_ps
#define vec_store _mm512_storeu_ps
#define vec_fma _mm512_fmadd_ps
#elif defined(__FMA__)
typedef __m256 Vec;
#define VEC_LANES 8
#define VEC_ISA "AVX2 and FMA (8 floats)"
#define vec_set1 _mm256_set1_ps
#define vec_load _mm256_loadu_ps
#define vec_store _mm256_storeu_ps
#define vec_fma _mm256_fmadd_ps
#else
typedef float Vec;
#define VEC_LANES 1
#define VEC_ISA "scalar fmaf (no FMA instructions targeted)"
static inline Vec vec_set1(float x) { return x; }
static inline Vec vec_load(const float *p) { return *p; }
static inline void vec_store(float *p, Vec v) { *p = v; }
#define vec_fma fmaf
#endif

int fma_peak_lanes(void) { return VEC_LANES; }
const char *fma_peak_isa(void) { return VEC_ISA; }

// Starting values from 1/64 to about 3, different in every lane, so that a
// loop that mixed lanes or chains up would give other results.
float fma_peak_start(int i) { return (float)(1 + i % 192) / 64.0f; }

double fma_peak_kernel(long iters, float *out) {
    float start[FMA_PEAK_CHAINS * VEC_LANES];
    for (int i = 0; i < FMA_PEAK_CHAINS * VEC_LANES; i++) start[i] = fma_peak_start(i);
    const Vec mul = vec_set1(FMA_PEAK_MUL), add = vec_set1(FMA_PEAK_ADD);
    Vec acc[FMA_PEAK_CHAINS];   // the compiler keeps all of them in registers
    for (int c = 0; c < FMA_PEAK_CHAINS; c++) acc[c] = vec_load(start + c * VEC_LANES);
    for (long it = 0; it < iters; it++)
        for (int c = 0; c < FMA_PEAK_CHAINS; c++) acc[c] = vec_fma(acc[c], mul, add);
    for (int c = 0; c < FMA_PEAK_CHAINS; c++) vec_store(out + c * VEC_LANES, acc[c]);
    return 2.0 * FMA_PEAK_CHAINS * VEC_LANES * (double)iters;
}

double fma_peak_parallel(int threads, long iters, float *out) {
    double flop = 0;
    #pragma omp parallel num_threads(threads) reduction(+ : flop)
    {
        float mine[FMA_PEAK_CHAINS * VEC_LANES];
        flop += fma_peak_kernel(iters, mine);
        if (omp_get_thread_num() == omp_get_num_threads() - 1) memcpy(out, mine, sizeof mine);
    }
    return flop;
}

void fma_peak_run(void *run) {
    FmaPeakRun *r = run;
    r->flop = fma_peak_parallel(r->threads, r->iters, r->out);
}
