// activations.c: GELU (exact, with erf), SiLU, and SwiGLU's gate.
// All elementwise: inp, out, dout, dinp (and gate, value) are flat arrays of
// n floats, whatever their shape in the model ((N, L, H) in the MLP, (N, D)
// in the time embedding).
#include <math.h>
#include "fastmath.h"
#include "layers.h"

#define OMP_IF_BIG if (n > OMP_MIN_FLOATS)

// GELU(x) = x · Φ(x) = 0.5 · x · (1 + erf(x / √2)), and its derivative
// GELU'(x) = Φ(x) + x · φ(x), φ(x) = e^(−x²/2) / √(2π) the normal density.
//
// Computed with fastmath.h, which the compiler turns into vector code
// (libm's erff and expf are calls a loop cannot vectorise); note that
// e^(−x²/2) serves both erf and φ. tests/test_fastmath.c checks both
// against the formula in double.
void gelu_forward(float *out, const float *inp, size_t n) {
    #pragma omp parallel for simd schedule(static) OMP_IF_BIG
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float u = x * (float)M_SQRT1_2;
        out[i] = 0.5f * x * (1.0f + erf_fast_with_exp(u, exp_fast(-u * u)));
    }
}

void gelu_backward(float *dinp, const float *dout, const float *inp, size_t n) {
    const float inv_sqrt_2pi = 0.3989422804014327f;
    #pragma omp parallel for simd schedule(static) OMP_IF_BIG
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float u = x * (float)M_SQRT1_2;
        float e = exp_fast(-u * u);                 // e^(−x²/2)
        float cdf = 0.5f * (1.0f + erf_fast_with_exp(u, e));
        dinp[i] += dout[i] * (cdf + x * inv_sqrt_2pi * e);
    }
}

// σ(x) = 1 / (1 + e^(−x)), with the vectorisable exp
static inline float sigmoidf(float x) { return 1.0f / (1.0f + exp_fast(-x)); }

// SiLU(x) = x · σ(x)
void silu_forward(float *out, const float *inp, size_t n) {
    #pragma omp parallel for simd schedule(static) OMP_IF_BIG
    for (size_t i = 0; i < n; i++) out[i] = inp[i] * sigmoidf(inp[i]);
}

// SiLU'(x) = σ(x) · (1 + x · (1 − σ(x)))
void silu_backward(float *dinp, const float *dout, const float *inp, size_t n) {
    #pragma omp parallel for simd schedule(static) OMP_IF_BIG
    for (size_t i = 0; i < n; i++) {
        float s = sigmoidf(inp[i]);
        dinp[i] += dout[i] * s * (1.0f + inp[i] * (1.0f - s));
    }
}

// SwiGLU's middle: out = SiLU(gate) · value, feature by feature. The gate
// decides how much of each value passes.
void swiglu_forward(float *out, const float *gate, const float *value, size_t n) {
    // EXERCISE(swiglu_forward) begin
    #pragma omp parallel for simd schedule(static) OMP_IF_BIG
    for (size_t i = 0; i < n; i++) out[i] = gate[i] * sigmoidf(gate[i]) * value[i];
    // EXERCISE end
}

void swiglu_backward(float *dgate, float *dvalue, const float *dout,
                     const float *gate, const float *value, size_t n) {
    // EXERCISE(swiglu_backward) begin
    #pragma omp parallel for simd schedule(static) OMP_IF_BIG
    for (size_t i = 0; i < n; i++) {
        float g = gate[i], s = sigmoidf(g);
        dgate[i] += dout[i] * value[i] * s * (1.0f + g * (1.0f - s));
        dvalue[i] += dout[i] * g * s;
    }
    // EXERCISE end
}
