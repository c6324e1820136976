// frechet.c: Fréchet distance between feature sets (see frechet.h).
//
// The one hard part is Tr((Σ₁Σ₂)^½). Σ₁Σ₂ is not symmetric, so a general
// matrix square root (scipy's sqrtm, a Schur decomposition in complex
// arithmetic) is the textbook route, and it is fragile: tiny imaginary parts,
// and failures when Σ is singular (fewer samples than dimensions). We use
// symmetric eigendecompositions only:
//     A = Σ₁^½            (eigendecompose Σ₁, take √ of its eigenvalues)
//     M = A Σ₂ A           symmetric positive semi-definite
//     Σ₁Σ₂ = A·(A Σ₂ A)·A⁻¹ = A M A⁻¹, so Σ₁Σ₂ and M share eigenvalues, and
//     Tr((Σ₁Σ₂)^½) = Σᵢ √λᵢ(M).
// (The identity needs A invertible; both sides are continuous in Σ₁, so it
// holds for singular Σ₁ too.) Eigenvalues that rounding pushes slightly below
// zero are clipped to 0 before the square root.
#include "frechet.h"
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

// One thread for the BLAS and LAPACK calls of this file. They are small
// (d = 128, in double), and OpenBLAS's own threads cost more to wake than
// they save. They also round differently on 1 and 2 threads (the distance
// moved in its 15th digit), and probe-FD should not depend on the thread
// count. The OpenMP build of OpenBLAS takes its thread count from
// omp_get_max_threads(), so setting that to 1 around the calls is enough.
static int one_thread_begin(void) {
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    return threads;
}
static void one_thread_end(int threads) { omp_set_num_threads(threads); }

int feature_stats_compute(FeatureStats *s, const float *features, long n, int d) {
    memset(s, 0, sizeof(*s));
    if (n < 2 || d < 1) return -1;
    double *mu = calloc((size_t)d, sizeof(double));
    double *cov = malloc(sizeof(double) * (size_t)d * (size_t)d);
    double *xc = malloc(sizeof(double) * (size_t)n * (size_t)d);   // centred copy (n, d)
    if (!mu || !cov || !xc) { free(mu); free(cov); free(xc); return -1; }

    // Pass 1: the mean, summed in double.
    for (long i = 0; i < n; i++)
        for (int j = 0; j < d; j++) mu[j] += features[i * d + j];
    for (int j = 0; j < d; j++) mu[j] /= (double)n;

    // Pass 2: centre, then cov = Xcᵀ·Xc / (n − 1). Centring first (rather than
    // E[xxᵀ] − μμᵀ) avoids cancelling two large numbers.
    for (long i = 0; i < n; i++)
        for (int j = 0; j < d; j++) xc[i * d + j] = (double)features[i * d + j] - mu[j];
    // dsyrk fills only the upper triangle of the symmetric product...
    int threads = one_thread_begin();
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, d, (int)n,
                1.0 / (double)(n - 1), xc, d, 0.0, cov, d);
    one_thread_end(threads);
    // ...so mirror it into the lower one.
    for (int i = 0; i < d; i++)
        for (int j = 0; j < i; j++) cov[i * d + j] = cov[j * d + i];
    free(xc);

    s->d = d; s->n = n; s->mu = mu; s->cov = cov;
    return 0;
}

void feature_stats_free(FeatureStats *s) {
    free(s->mu); free(s->cov);
    memset(s, 0, sizeof(*s));
}

double trace_sqrt_psd(const double *A, int d) {
    double *a = malloc(sizeof(double) * (size_t)d * (size_t)d);
    double *w = malloc(sizeof(double) * (size_t)d);
    if (!a || !w) { free(a); free(w); return NAN; }
    memcpy(a, A, sizeof(double) * (size_t)d * (size_t)d);
    // Eigenvalues only ('N'); LAPACK reads the upper triangle ('U').
    int threads = one_thread_begin();
    lapack_int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'N', 'U', d, a, d, w);
    one_thread_end(threads);
    double tr = NAN;
    if (info == 0) {
        tr = 0.0;
        for (int i = 0; i < d; i++) tr += sqrt(w[i] > 0.0 ? w[i] : 0.0);
    }
    free(a); free(w);
    return tr;
}

// A = S^½ for symmetric PSD S (d, d): S = V·diag(λ)·Vᵀ, A = V·diag(√λ)·Vᵀ.
static int sqrt_psd(double *A, const double *S, int d) {
    size_t dd = (size_t)d * (size_t)d;
    double *v = malloc(sizeof(double) * dd);
    double *vs = malloc(sizeof(double) * dd);
    double *w = malloc(sizeof(double) * (size_t)d);
    int rc = -1;
    if (!v || !vs || !w) goto done;
    memcpy(v, S, sizeof(double) * dd);
    // 'V': v is overwritten by the eigenvectors, one per column.
    if (LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', d, v, d, w) != 0) goto done;
    for (int i = 0; i < d; i++)                   // vs = V·diag(√λ): scale columns
        for (int j = 0; j < d; j++)
            vs[i * d + j] = v[i * d + j] * sqrt(w[j] > 0.0 ? w[j] : 0.0);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, d, d, d,
                1.0, vs, d, v, d, 0.0, A, d);     // A = vs·Vᵀ
    rc = 0;
done:
    free(v); free(vs); free(w);
    return rc;
}

double frechet_distance(const FeatureStats *a, const FeatureStats *b) {
    if (!a || !b || a->d != b->d || a->d < 1) return NAN;
    int d = a->d;
    size_t dd = (size_t)d * (size_t)d;

    double mean_term = 0.0, tr1 = 0.0, tr2 = 0.0;
    for (int i = 0; i < d; i++) {
        double diff = a->mu[i] - b->mu[i];
        mean_term += diff * diff;
        tr1 += a->cov[i * d + i];
        tr2 += b->cov[i * d + i];
    }

    double *A = malloc(sizeof(double) * dd);     // Σ₁^½
    double *T = malloc(sizeof(double) * dd);     // A·Σ₂
    double *M = malloc(sizeof(double) * dd);     // A·Σ₂·A
    double fd = NAN;
    int threads = one_thread_begin();
    if (!A || !T || !M) goto done;
    if (sqrt_psd(A, a->cov, d) != 0) goto done;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, d, d,
                1.0, A, d, b->cov, d, 0.0, T, d);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, d, d,
                1.0, T, d, A, d, 0.0, M, d);
    // M is symmetric in exact arithmetic; rounding leaves it ~1e-16 off.
    // Average it with its transpose so the symmetric solver sees what we mean.
    for (int i = 0; i < d; i++)
        for (int j = 0; j < i; j++) {
            double m = 0.5 * (M[i * d + j] + M[j * d + i]);
            M[i * d + j] = m; M[j * d + i] = m;
        }
    double tr_covmean = trace_sqrt_psd(M, d);
    if (!isnan(tr_covmean)) fd = mean_term + tr1 + tr2 - 2.0 * tr_covmean;
done:
    one_thread_end(threads);
    free(A); free(T); free(M);
    return fd;
}
