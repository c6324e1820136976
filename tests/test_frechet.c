// test_frechet.c: the Fréchet distance of common/eval/frechet.h against cases
// whose answer is known in closed form.
#include <omp.h>
#include "testutil.h"
#include <cblas.h>
#include <lapacke.h>
#include "eval/frechet.h"
#include "eval/scorecard.h"

// The Fréchet distance between two sets of features (n, d): stats of both, then their FD.
static double fd_of_features(const float *f1, long n1, const float *f2, long n2, int d) {
    FeatureStats a, b;
    ck_assert_int_eq(feature_stats_compute(&a, f1, n1, d), 0);
    ck_assert_int_eq(feature_stats_compute(&b, f2, n2, d), 0);
    double fd = frechet_distance(&a, &b);
    feature_stats_free(&a);
    feature_stats_free(&b);
    return fd;
}

// x (n, d) = mu + z · Lᵀ with z ~ N(0, I): samples of N(mu, L·Lᵀ).
static float *gaussian_sample(long n, int d, const double *mu, const double *L, unsigned long long seed) {
    float *x = alloc_floats((size_t)n * d);
    double *z = malloc(sizeof(double) * d);
    Rng r; rng_seed(&r, seed);
    for (long i = 0; i < n; i++) {
        for (int j = 0; j < d; j++) z[j] = rng_normal(&r);
        for (int j = 0; j < d; j++) {
            double s = mu[j];
            for (int k = 0; k < d; k++) s += L[j * d + k] * z[k];
            x[i * d + j] = (float)s;
        }
    }
    free(z);
    return x;
}

// Tr((S1 S2)^½) for 2x2 S1, S2, with no matrix square root at all: if λ1, λ2
// are the eigenvalues of S1·S2, then (√λ1 + √λ2)² = λ1 + λ2 + 2√(λ1λ2)
// = Tr(S1·S2) + 2√(det S1 · det S2).
static double tr_sqrt_2x2(const double *S1, const double *S2) {
    double tr = S1[0] * S2[0] + S1[1] * S2[2] + S1[2] * S2[1] + S1[3] * S2[3];
    double det1 = S1[0] * S1[3] - S1[1] * S1[2], det2 = S2[0] * S2[3] - S2[1] * S2[2];
    return sqrt(tr + 2.0 * sqrt(det1 * det2));
}

START_TEST(test_stats_match_naive) {
    // Mean and unbiased covariance against the textbook double loops.
    long n = 50; int d = 5;
    float *x = alloc_floats((size_t)n * d);
    fill_normal(x, (size_t)n * d, 2.0f, 7);
    for (long i = 0; i < n; i++) x[i * d + 1] += 3.0f;     // a non-zero mean
    FeatureStats s;
    ck_assert_int_eq(feature_stats_compute(&s, x, n, d), 0);
    for (int a = 0; a < d; a++) {
        double mu = 0; for (long i = 0; i < n; i++) mu += x[i * d + a]; mu /= n;
        ck_assert(fabs(s.mu[a] - mu) < 1e-12 * (1 + fabs(mu)));
    }
    for (int a = 0; a < d; a++)
        for (int b = 0; b < d; b++) {
            double c = 0;
            for (long i = 0; i < n; i++) c += (x[i * d + a] - s.mu[a]) * (x[i * d + b] - s.mu[b]);
            c /= (n - 1);                                   // numpy.cov divides by n − 1
            ck_assert(fabs(s.cov[a * d + b] - c) < 1e-10);
        }
    feature_stats_free(&s);
    ck_assert_int_eq(feature_stats_compute(&s, x, 1, d), -1);   // one sample: no covariance
    free(x);
}
END_TEST

START_TEST(test_fd_self_is_zero) {
    long n = 2000; int d = 64;
    float *x = alloc_floats((size_t)n * d);
    fill_normal(x, (size_t)n * d, 1.5f, 11);
    for (long i = 0; i < n; i++)                            // correlate the dimensions
        for (int j = 1; j < d; j++) x[i * d + j] += 0.5f * x[i * d + j - 1];
    FeatureStats s;
    ck_assert_int_eq(feature_stats_compute(&s, x, n, d), 0);
    double tr = 0; for (int j = 0; j < d; j++) tr += s.cov[j * d + j];
    double fd = frechet_distance(&s, &s);
    ck_assert_msg(fabs(fd) <= 1e-6 * 2 * tr, "FD(x, x) = %g (traces %g)", fd, 2 * tr);
    feature_stats_free(&s);
    free(x);
}
END_TEST

START_TEST(test_fd_2x2_rotated_closed_form) {
    // Two rotated, correlated 2-D Gaussians. On the sample statistics the FD
    // must equal the 2x2 closed form to rounding; on the population it must be
    // close for large n.
    const double mu1[2] = {0.5, -1.0}, mu2[2] = {-0.3, 0.7};
    const double L1[4] = {2.0, 0.0, 1.2, 0.5};              // S1 = L1·L1ᵀ
    const double L2[4] = {0.6, -0.4, 0.3, 1.5};
    long n = 20000;
    float *x1 = gaussian_sample(n, 2, mu1, L1, 1), *x2 = gaussian_sample(n, 2, mu2, L2, 2);
    FeatureStats a, b;
    ck_assert_int_eq(feature_stats_compute(&a, x1, n, 2), 0);
    ck_assert_int_eq(feature_stats_compute(&b, x2, n, 2), 0);
    double fd = frechet_distance(&a, &b);

    double dm = (a.mu[0] - b.mu[0]) * (a.mu[0] - b.mu[0]) + (a.mu[1] - b.mu[1]) * (a.mu[1] - b.mu[1]);
    double want = dm + a.cov[0] + a.cov[3] + b.cov[0] + b.cov[3] - 2 * tr_sqrt_2x2(a.cov, b.cov);
    ck_assert_msg(fabs(fd - want) < 1e-9 * (1 + want), "sample FD %.12g, closed form %.12g", fd, want);

    double S1[4], S2[4];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            S1[i * 2 + j] = L1[i * 2] * L1[j * 2] + L1[i * 2 + 1] * L1[j * 2 + 1];
            S2[i * 2 + j] = L2[i * 2] * L2[j * 2] + L2[i * 2 + 1] * L2[j * 2 + 1];
        }
    double pop = (mu1[0] - mu2[0]) * (mu1[0] - mu2[0]) + (mu1[1] - mu2[1]) * (mu1[1] - mu2[1])
               + S1[0] + S1[3] + S2[0] + S2[3] - 2 * tr_sqrt_2x2(S1, S2);
    ck_assert_msg(fabs(fd - pop) < 0.05 * pop, "sample FD %.4g vs population %.4g", fd, pop);
    ck_assert(fabs(fd_of_features(x1, n, x2, n, 2) - fd) < 1e-12 * (1 + fd));
    feature_stats_free(&a); feature_stats_free(&b);
    free(x1); free(x2);
}
END_TEST

START_TEST(test_fd_scaled_copy_exact) {
    // x2 = c·x1 + m in 32 correlated dimensions: then S2 = c²·S1, so
    // (S1 S2)^½ = |c|·S1 and FD = ‖mean shift‖² + (1 − |c|)²·Tr(S1), exactly,
    // on the sample statistics, whatever S1 is.
    long n = 500; int d = 32;
    float *x1 = alloc_floats((size_t)n * d), *x2 = alloc_floats((size_t)n * d);
    fill_normal(x1, (size_t)n * d, 1.0f, 5);
    for (long i = 0; i < n; i++)
        for (int j = 1; j < d; j++) x1[i * d + j] += 0.8f * x1[i * d + j - 1];
    const float c = 0.5f;                                  // exact in float: x2 rounds nothing away
    for (long i = 0; i < n; i++)
        for (int j = 0; j < d; j++) x2[i * d + j] = c * x1[i * d + j] + (j % 2 ? 1.0f : -0.5f);
    FeatureStats a, b;
    ck_assert_int_eq(feature_stats_compute(&a, x1, n, d), 0);
    ck_assert_int_eq(feature_stats_compute(&b, x2, n, d), 0);
    double dm = 0, tr = 0;
    for (int j = 0; j < d; j++) {
        double diff = a.mu[j] - b.mu[j];
        dm += diff * diff;
        tr += a.cov[j * d + j];
    }
    double want = dm + (1 - c) * (1 - c) * tr;
    double fd = frechet_distance(&a, &b);
    ck_assert_msg(fabs(fd - want) < 1e-8 * want, "FD %.12g, want %.12g", fd, want);
    feature_stats_free(&a); feature_stats_free(&b);
    free(x1); free(x2);
}
END_TEST

START_TEST(test_fd_same_on_1_and_2_threads) {
    // The statistics and the distance run their BLAS and LAPACK calls on one
    // thread (frechet.c): the same bits whatever the caller's thread count,
    // and the caller's count is given back afterwards.
    long n = 1000; int d = 128;
    float *x1 = alloc_floats((size_t)n * d), *x2 = alloc_floats((size_t)n * d);
    fill_normal(x1, (size_t)n * d, 1.0f, 11);
    fill_normal(x2, (size_t)n * d, 1.2f, 12);
    for (long i = 0; i < (long)n * d; i++) x2[i] += 0.1f * (float)(i % 7);
    double fd[2];
    for (int threads = 1; threads <= 2; threads++) {
        omp_set_num_threads(threads);
        fd[threads - 1] = fd_of_features(x1, n, x2, n, d);
        ck_assert_int_eq(omp_get_max_threads(), threads);
    }
    ck_assert_msg(isfinite(fd[0]) && memcmp(&fd[0], &fd[1], sizeof(double)) == 0,
                  "FD on 1 thread %.17g, on 2 threads %.17g", fd[0], fd[1]);
    free(x1); free(x2);
}
END_TEST

START_TEST(test_fd_diagonal_population) {
    // Independent coordinates: the population FD is
    // ‖μ1 − μ2‖² + Σ (σ1ᵢ − σ2ᵢ)².
    int d = 4; long n = 20000;
    double mu1[4] = {0, 1, 2, 3}, mu2[4] = {0.5, 1, 1.5, 3};
    double sd1[4] = {1, 2, 0.5, 1}, sd2[4] = {1, 1, 1, 1.5};
    double L1[16] = {0}, L2[16] = {0};
    double pop = 0;
    for (int j = 0; j < d; j++) {
        L1[j * d + j] = sd1[j]; L2[j * d + j] = sd2[j];
        pop += (mu1[j] - mu2[j]) * (mu1[j] - mu2[j]) + (sd1[j] - sd2[j]) * (sd1[j] - sd2[j]);
    }
    float *x1 = gaussian_sample(n, d, mu1, L1, 3), *x2 = gaussian_sample(n, d, mu2, L2, 4);
    double fd = fd_of_features(x1, n, x2, n, d);
    ck_assert_msg(fabs(fd - pop) < 0.05 * pop, "FD %.4g vs population %.4g", fd, pop);
    free(x1); free(x2);
}
END_TEST

START_TEST(test_fd_fewer_samples_than_dims) {
    // n < d: both covariances are singular. FD must still be a number, and
    // a set against itself still 0 (the eigenvalues clipped at 0 do this).
    long n = 6; int d = 20;
    float *x = alloc_floats((size_t)n * d), *y = alloc_floats((size_t)n * d);
    fill_normal(x, (size_t)n * d, 1.0f, 8);
    fill_normal(y, (size_t)n * d, 1.0f, 9);
    double self = fd_of_features(x, n, x, n, d);
    double other = fd_of_features(x, n, y, n, d);
    ck_assert(isfinite(self) && isfinite(other));
    ck_assert_msg(fabs(self) < 1e-6 * d, "FD(x, x) = %g", self);
    ck_assert(other > 1.0);
    free(x); free(y);
}
END_TEST

START_TEST(test_trace_sqrt_psd) {
    double A[9] = {4, 0, 0, 0, 9, 0, 0, 0, 0};             // √: diag(2, 3, 0)
    ck_assert(fabs(trace_sqrt_psd(A, 3) - 5.0) < 1e-12);
    FeatureStats a = {0}, b = {0};
    double mu[2] = {0, 0}, cov[4] = {1, 0, 0, 1};
    a.d = 2; a.mu = mu; a.cov = cov;
    b.d = 3; b.mu = mu; b.cov = cov;
    ck_assert(isnan(frechet_distance(&a, &b)));             // dimensions differ
}
END_TEST

// probe-FD, pinned: scorecard_probe_fd (the samples' features in batches,
// their statistics, frechet_distance) against a recomputation by another
// route. Features image by image; then, with X1, X2 the centred features
// divided by √(n−1), Σ1 = X1ᵀX1 and Σ2 = X2ᵀX2, and the nonzero eigenvalues of
// Σ1Σ2 are the squared singular values of X1·X2ᵀ: Tr((Σ1Σ2)^½) is the sum of
// those singular values, from an SVD, with no matrix square root.
// Features of n images, image by image (batch 1), centred and divided by
// √(n−1): X (n, D) with Σ = XᵀX; their mean into mu (D).
static void centred_features(const Probe *p, const float *images, int n, double *X, double *mu) {
    float f[PROBE_FEATURES];
    for (int j = 0; j < PROBE_FEATURES; j++) mu[j] = 0.0;
    for (int i = 0; i < n; i++) {
        probe_features(p, images + (size_t)i * CIFAR_PIXELS, 1, f);
        for (int j = 0; j < PROBE_FEATURES; j++) { X[(size_t)i * PROBE_FEATURES + j] = f[j]; mu[j] += f[j] / (double)n; }
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < PROBE_FEATURES; j++)
            X[(size_t)i * PROBE_FEATURES + j] = (X[(size_t)i * PROBE_FEATURES + j] - mu[j]) / sqrt(n - 1.0);
}

START_TEST(test_probe_fd_is_the_formula) {
    const int n_real = 160, n_fake = 130, D = PROBE_FEATURES;
    Probe *p = probe_alloc();
    ck_assert_ptr_nonnull(p);
    probe_init(p, 7);
    CifarSet real = { n_real, malloc((size_t)n_real * CIFAR_PIXELS), calloc(n_real, 1) };
    Rng r;
    rng_seed(&r, 21);
    for (size_t i = 0; i < (size_t)n_real * CIFAR_PIXELS; i++) real.pixels[i] = (uint8_t)rng_below(&r, 256);
    float *real_x = alloc_floats((size_t)n_real * CIFAR_PIXELS), *fake = alloc_floats((size_t)n_fake * CIFAR_PIXELS);
    cifar_range_to_float(&real, 0, n_real, real_x);
    fill_normal(fake, (size_t)n_fake * CIFAR_PIXELS, 0.6f, 9);   // "samples" of another distribution
    FeatureStats stats;
    ck_assert_int_eq(scorecard_real_stats(p, &real, &stats), 0);
    double got = scorecard_probe_fd(p, &stats, fake, n_fake);

    double *X1 = malloc(sizeof(double) * n_real * D), *X2 = malloc(sizeof(double) * n_fake * D);
    double *mu1 = calloc(D, sizeof(double)), *mu2 = calloc(D, sizeof(double));
    double t0 = omp_get_wtime();
    centred_features(p, real_x, n_real, X1, mu1);
    centred_features(p, fake, n_fake, X2, mu2);
    printf("features image by image: %.1f s\n", omp_get_wtime() - t0);
    double mean_term = 0, tr1 = 0, tr2 = 0;
    for (int j = 0; j < D; j++) mean_term += (mu1[j] - mu2[j]) * (mu1[j] - mu2[j]);
    for (size_t k = 0; k < (size_t)n_real * D; k++) tr1 += X1[k] * X1[k];
    for (size_t k = 0; k < (size_t)n_fake * D; k++) tr2 += X2[k] * X2[k];
    double *C = malloc(sizeof(double) * n_real * n_fake), *sv = malloc(sizeof(double) * n_fake);
    double *super = malloc(sizeof(double) * n_fake);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n_real, n_fake, D, 1.0, X1, D, X2, D, 0.0, C, n_fake);
    ck_assert_int_eq(LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'N', 'N', n_real, n_fake, C, n_fake, sv, NULL, 1, NULL, 1, super), 0);
    double nuclear = 0;
    for (int i = 0; i < n_fake; i++) nuclear += sv[i];
    double want = mean_term + tr1 + tr2 - 2.0 * nuclear;
    ck_assert_msg(want > 0.01 * (tr1 + tr2), "the two sets are too alike to test anything (FD %g)", want);
    ck_assert_msg(fabs(got - want) <= 1e-4 * want, "probe-FD %.9g, recomputed %.9g (relative %.1e)", got, want,
                  fabs(got - want) / want);
    printf("probe-FD of 130 samples against 160 images: %.6f, recomputed through an SVD %.6f\n", got, want);
    feature_stats_free(&stats);
    free(X1); free(X2); free(mu1); free(mu2); free(C); free(sv); free(super);
    free(real_x); free(fake); cifar_free(&real);
    probe_free(p);
}
END_TEST

int main(void) {
    Suite *s = suite_create("frechet");
    add_tests(s, "core", 0, TESTS(test_stats_match_naive, test_fd_self_is_zero, test_fd_2x2_rotated_closed_form,
                                  test_fd_scaled_copy_exact, test_fd_diagonal_population,
                                  test_fd_same_on_1_and_2_threads, test_fd_fewer_samples_than_dims,
                                  test_trace_sqrt_psd));
    // 500 probe forward passes
    add_tests(s, "probe-FD", 120, TESTS(test_probe_fd_is_the_formula));
    return run_suite(s);
}
