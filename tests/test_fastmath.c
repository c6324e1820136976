// test_fastmath.c: the fast exp, erf and GELU of fastmath.h and layers.c
// measured against libm in double precision, on a dense grid over the whole
// range where they are used. The maxima are printed and asserted with a
// little headroom; fastmath.h's comment quotes what this test printed.
//
//   exp_fast   x in [-87, 88] (outside, it clamps): relative error, in units
//              of float32's epsilon 2^-23 (so 1.0 is one rounding step)
//   erf_fast   x in [-10, 10] (|erf| is 1 in float32 beyond ±4): absolute
//   gelu       x in [-10, 10]: forward |error| / max(1, |x|), backward
//              (with dout = 1) absolute error of GELU'(x)
#include "testutil.h"
#include "nn/fastmath.h"
#include "nn/layers.h"

#define FLT_EPS_23 1.1920928955078125e-07   // 2^-23

// Bounds: the measured maxima (printed by this test) with about 25% headroom.
#define EXP_MAX_ULP 2.5
#define ERF_MAX_ABS 6.5e-7
#define GELU_FWD_MAX 2.5e-7
#define GELU_BWD_MAX 4.0e-7

// n points spread evenly over [lo, hi], both ends included.
static float grid_point(double lo, double hi, long i, long n) {
    return (float)(lo + (hi - lo) * (double)i / (double)(n - 1));
}

START_TEST(test_exp_fast_against_libm) {
    const long n = 4000001;   // a step of 4.4e-5
    double worst = 0.0;
    float at = 0.0f;
    for (long i = 0; i < n; i++) {
        float x = grid_point(-87.0, 88.0, i, n);
        double ref = exp((double)x);
        double rel = fabs((double)exp_fast(x) - ref) / ref / FLT_EPS_23;
        if (!(rel <= worst)) { worst = rel; at = x; }
    }
    printf("exp_fast on [-87, 88], %ld points: max relative error %.2f x 2^-23 (at x = %.5g)\n", n, worst, at);
    ck_assert_msg(worst <= EXP_MAX_ULP, "exp_fast: relative error %.3g x 2^-23 at x = %g > %g", worst, at,
                  EXP_MAX_ULP);
    // the clamp ends and NaN
    ck_assert(isfinite(exp_fast(-1000.0f)) && exp_fast(-1000.0f) >= 0.0f);
    ck_assert(isfinite(exp_fast(1000.0f)));
    ck_assert(isnan(exp_fast(NAN)));
}
END_TEST

START_TEST(test_erf_fast_against_libm) {
    const long n = 2000001;   // a step of 1e-5
    double worst = 0.0;
    float at = 0.0f;
    for (long i = 0; i < n; i++) {
        float x = grid_point(-10.0, 10.0, i, n);
        double err = fabs((double)erf_fast(x) - erf((double)x));
        if (!(err <= worst)) { worst = err; at = x; }
    }
    printf("erf_fast on [-10, 10], %ld points: max absolute error %.2e (at x = %.5g)\n", n, worst, at);
    ck_assert_msg(worst <= ERF_MAX_ABS, "erf_fast: error %.3g at x = %g > %g", worst, at, ERF_MAX_ABS);
}
END_TEST

// GELU through the layer functions themselves (gelu_forward / gelu_backward,
// the vectorised loops the model runs), against the formula in double.
START_TEST(test_gelu_fast_against_libm) {
    const long n = 2000001;
    float *x = alloc_floats(n), *y = alloc_floats(n), *dx = alloc_floats(n), *ones = alloc_floats(n);
    for (long i = 0; i < n; i++) { x[i] = grid_point(-10.0, 10.0, i, n); ones[i] = 1.0f; }
    gelu_forward(y, x, n);
    gelu_backward(dx, ones, x, n, ADD_TO_DINP);
    double worst_f = 0.0, worst_b = 0.0;
    float at_f = 0.0f, at_b = 0.0f;
    for (long i = 0; i < n; i++) {
        double u = (double)x[i];
        double cdf = 0.5 * (1.0 + erf(u / sqrt(2.0)));
        double pdf = exp(-0.5 * u * u) / sqrt(2.0 * M_PI);
        double ef = fabs((double)y[i] - u * cdf) / fmax(1.0, fabs(u));
        double eb = fabs((double)dx[i] - (cdf + u * pdf));
        if (!(ef <= worst_f)) { worst_f = ef; at_f = x[i]; }
        if (!(eb <= worst_b)) { worst_b = eb; at_b = x[i]; }
    }
    printf("gelu (fast) on [-10, 10], %ld points: forward max error %.2e of max(1, |x|) (at x = %.5g), "
           "backward max error %.2e (at x = %.5g)\n", n, worst_f, at_f, worst_b, at_b);
    ck_assert_msg(worst_f <= GELU_FWD_MAX, "gelu_forward: error %.3g at x = %g > %g", worst_f, at_f, GELU_FWD_MAX);
    ck_assert_msg(worst_b <= GELU_BWD_MAX, "gelu_backward: error %.3g at x = %g > %g", worst_b, at_b, GELU_BWD_MAX);
    free(x); free(y); free(dx); free(ones);
}
END_TEST

int main(void) {
    return run_tests("fastmath", "fastmath", 60, TESTS(test_exp_fast_against_libm, test_erf_fast_against_libm,
                                                       test_gelu_fast_against_libm));
}
