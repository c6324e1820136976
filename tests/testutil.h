// testutil.h: small helpers shared by the Check test programs.
#pragma once
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io/paths.h"
#include "nn/rng.h"

// The PyTorch reference's golden files: $GOLDEN_DIR if set, else the
// project's tests/golden (made by tools/tinydit_ref.py, committed), wherever
// the test runs from. Writes the folder, or the file inside it, into out;
// returns 1 if it is there, 0 if not.
static inline int golden_path(const char *file, char *out, size_t outlen) {
    const char *env = getenv("GOLDEN_DIR"), *slash = file ? "/" : "";
    if (!file) file = "";
    if (env && *env) {
        snprintf(out, outlen, "%s%s%s", env, slash, file);
    } else {
        char relative[512];
        snprintf(relative, sizeof relative, "tests/golden%s%s", slash, file);
        if (project_path(out, outlen, relative) != 0) return 0;
    }
    return access(out, R_OK) == 0;
}

// Fills x (n) with N(0, std²) numbers from a fixed seed.
static inline void fill_normal(float *x, size_t n, float std, unsigned long long seed) {
    Rng r; rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) x[i] = std * rng_normal(&r);
}

static inline float *alloc_floats(size_t n) {
    float *p = calloc(n ? n : 1, sizeof(float));
    ck_assert_ptr_nonnull(p);
    return p;
}

// ---------------------------------------------------------------------------
// Finite-difference gradient check.
//
// The layer under test is wrapped as a scalar function f(ctx) = Σ out · w, with
// fixed random weights w, so the analytic gradient of any input x is what the
// backward pass returns for dout = w. The numerical gradient is the central
// difference (f(x + h) - f(x - h)) / 2h, evaluated in float32 but summed in
// double.
//
// Tolerance: float32 central differences with h = 1e-2 on O(1) inputs carry
// errors of about 1e-4..1e-3 of the gradient's scale (rounding ~1e-7·|f|/h,
// truncation ~h²·f'''). We therefore require, for every element,
//     |analytic - numeric| <= GRAD_TOL · max(1, max_i |numeric_i|)
// with GRAD_TOL = 1e-2 (1%): loose enough for float32, tight enough that a
// missing term, a wrong sign or a wrong index fails (those give O(1) errors).
#define GRAD_TOL 1e-2
#define GRAD_H 1e-2f

typedef double (*ScalarFn)(void *ctx);

// Checks analytic (n values) against the central difference of f in x (n).
// Returns the worst error relative to the gradient scale; fails the test
// (ck_assert) if it is above GRAD_TOL. Probes at most max_probe elements
// (spread evenly) to keep big tensors fast.
static inline double grad_check(const char *what, ScalarFn f, void *ctx, float *x,
                                const float *analytic, size_t n, size_t max_probe) {
    size_t stride = (max_probe && n > max_probe) ? n / max_probe : 1;
    double scale = 1.0, worst = 0.0;
    size_t nprobe = 0;
    double *num = malloc(sizeof(double) * (n / stride + 1));
    size_t *idx = malloc(sizeof(size_t) * (n / stride + 1));
    for (size_t i = 0; i < n; i += stride) {
        float keep = x[i];
        x[i] = keep + GRAD_H; double fp = f(ctx);
        x[i] = keep - GRAD_H; double fm = f(ctx);
        x[i] = keep;
        double d = (fp - fm) / (2.0 * GRAD_H);
        num[nprobe] = d; idx[nprobe] = i; nprobe++;
        if (fabs(d) > scale) scale = fabs(d);
    }
    for (size_t j = 0; j < nprobe; j++) {
        double err = fabs(analytic[idx[j]] - num[j]) / scale;
        if (err > worst) worst = err;
    }
    free(num); free(idx);
    if (worst > GRAD_TOL)
        fprintf(stderr, "grad check %s: worst error %.3g of scale %.3g (tolerance %.0e)\n",
                what, worst, scale, GRAD_TOL);
    ck_assert_msg(worst <= GRAD_TOL, "gradient check of %s failed: error %.3g > %.0e",
                  what, worst, GRAD_TOL);
    return worst;
}

static inline double dot_fd(const float *a, const float *b, size_t n) {
    double s = 0; for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i]; return s;
}

// Runs a suite with Check and returns the process exit code.
static inline int run_suite(Suite *s) {
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// ---------------------------------------------------------------------------
// Temporary folders, one helper for every test that writes files.
// tmpdir_make creates a fresh empty folder $TMPDIR/tinydit_<tag>_XXXXXX
// (TMPDIR defaults to /tmp), writes its path into buf (n bytes) and returns
// buf; the test fails if it cannot. tmpdir_remove deletes such a folder and
// everything under it (without following symbolic links); it refuses any
// path that tmpdir_make could not have made.
#include <ftw.h>

static inline char *tmpdir_make(char *buf, size_t n, const char *tag) {
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    int len = snprintf(buf, n, "%s/tinydit_%s_XXXXXX", base, tag);
    ck_assert_msg(len > 0 && (size_t)len < n, "temp folder name too long for its buffer");
    ck_assert_msg(mkdtemp(buf) != NULL, "cannot create a temp folder %s", buf);
    return buf;
}

static inline int tmpdir_remove_one(const char *path, const struct stat *st, int type, struct FTW *f) {
    (void)st; (void)type; (void)f;
    return remove(path);
}

static inline void tmpdir_remove(const char *path) {
    ck_assert_msg(path && strstr(path, "/tinydit_") != NULL,
                  "tmpdir_remove: %s is not a folder from tmpdir_make", path ? path : "(null)");
    ck_assert_msg(nftw(path, tmpdir_remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0,
                  "cannot remove the temp folder %s", path);
}
