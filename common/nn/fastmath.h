// fastmath.h: exp and erf written out as plain arithmetic, so that the
// compiler can vectorise the loops that call them (a call into libm's expf or
// erff prevents vectorisation: each element then costs a function call).
//
// Accuracy, measured by tests/test_fastmath.c against libm in double on a
// dense grid (it asserts these with about 25% headroom):
//   exp_fast  1.89 × 2⁻²³ relative at most, over [-87, 88] (Cody-Waite
//             reduction + degree-6 polynomial): two float32 rounding steps
//   erf_fast  5.2e-7 absolute at most, over [-10, 10] (Abramowitz & Stegun
//             7.1.26, itself good to 1.5e-7; the rest is float32 rounding of
//             1 − poly·e^(−x²) near x = 0, where both terms are close to 1)
//   GELU      gelu_forward 1.9e-7 of max(1, |x|), gelu_backward 2.8e-7
//             absolute, over [-10, 10]
// tests/test_fastmath.c measures these bounds against libm in double.
#pragma once
#include <stdint.h>
#include <string.h>

// e^x = 2^n · e^r with n = round(x / ln 2) and |r| ≤ ln2 / 2. e^r comes from
// its Taylor series to r⁶ (error below 2e-7 on that interval); 2^n is built
// directly in the float's exponent bits. Inputs are clamped to the range
// where e^x is a normal float.
//
// A NaN fails both comparisons of the clamp and would reach the conversion to
// int32_t below, which is undefined behaviour for NaN (UBSan reports the
// shift, `make sanitize` with a diverging run). So a NaN is computed as 0 and
// handed back unchanged at the end. Every `?:` here is a select, not a jump,
// once gcc may assume that comparisons do not trap: mk/common.mk passes
// -fno-trapping-math for that. Without it these loops compile to scalar code
// with branches (docs/performance.md says how to check the vector code).
static inline float exp_fast(float x) {
    int is_nan = x != x;
    float xin = x;
    x = is_nan ? 0.0f : x;
    x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
    float n = __builtin_rintf(x * 1.44269504088896341f);
    // ln 2 split in two parts (Cody-Waite), so r keeps its low bits
    float r = x - n * 0.693145751953125f - n * 1.42860682030941723e-6f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (0.166666672f + r * (0.0416666679f +
              r * (0.00833333377f + r * 0.00138888892f)))));
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return is_nan ? xin : p * scale;
}

// erf(x) for x ≥ 0 as 1 − (a₁t + a₂t² + a₃t³ + a₄t⁴ + a₅t⁵)·e^(−x²) with
// t = 1/(1 + p·x) (Abramowitz & Stegun 7.1.26); odd symmetry for x < 0.
// e^(−x²) is passed in (exp_neg_x2) because GELU's backward needs it too.
static inline float erf_fast_with_exp(float x, float exp_neg_x2) {
    float ax = x < 0 ? -x : x;
    float t = 1.0f / (1.0f + 0.3275911f * ax);
    float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f +
                 t * (-1.453152027f + t * 1.061405429f))));
    float e = 1.0f - poly * exp_neg_x2;
    return x < 0 ? -e : e;
}

static inline float erf_fast(float x) {
    return erf_fast_with_exp(x, exp_fast(-x * x));
}
