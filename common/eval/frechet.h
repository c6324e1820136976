// frechet.h: the Fréchet distance between two sets of feature vectors, the
// "FD" of probe-FD.
//
// Each set is summarised by a Gaussian: its mean μ and covariance Σ. The
// Fréchet (2-Wasserstein) distance between two Gaussians is
//     FD = ‖μ₁ − μ₂‖² + Tr(Σ₁) + Tr(Σ₂) − 2·Tr((Σ₁Σ₂)^½).
// It is FID's formula in another feature space (common/eval/probe.h), so it
// compares within this project only. Everything here is double precision:
// the trace term is a difference of large, nearly equal numbers.
#pragma once

typedef struct {
    int d;          // feature dimension
    long n;         // number of samples the statistics came from
    double *mu;     // (d)     mean
    double *cov;    // (d, d)  covariance, unbiased (divides by n − 1, like numpy.cov)
} FeatureStats;

// Mean and covariance of features (n >= 2, d); 0, or -1 leaving s empty.
int feature_stats_compute(FeatureStats *s, const float *features, long n, int d);
void feature_stats_free(FeatureStats *s);

// FD between two summaries of the same dimension, NAN if LAPACK fails. Not
// clamped: rounding can make a true 0 a tiny negative number.
double frechet_distance(const FeatureStats *a, const FeatureStats *b);

// Tr(A^½) of a symmetric PSD matrix A (d, d) from its eigenvalues (negative
// ones, from rounding, count as 0). Exposed for the tests.
double trace_sqrt_psd(const double *A, int d);
