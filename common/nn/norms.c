// norms.c: LayerNorm and RMSNorm over the last dimension (no affine
// parameters for the block norms: adaLN supplies scale and shift), the
// adaLN modulation x·(1 + scale) + shift that follows every norm, and
// adaLN-Zero's gate x + gate·branch at the end of each block half.
#include <math.h>
#include "layers.h"

// ---------------------------------------------------------------------------
// One row at a time. Each norm is written once, for one row of D floats: the
// plain functions below loop these over R rows, and the fused norm and
// modulation at the end of the file calls the same four, so the arithmetic
// the steps teach is the arithmetic the model trains with.
//
// Each row's sums carry `#pragma omp simd reduction`: without it gcc must
// add the D numbers one after another, as written (float addition is not
// associative), and a row's sum waits on D additions in a chain; with it
// the sum runs in vector lanes, added up at the end. The order is fixed by
// the build, not by the threads, so runs stay the same on any thread count;
// the last bits differ from a one-lane sum.

// LayerNorm of one row: y = (x - mean) · rstd,  rstd = 1 / sqrt(var + eps).
// x, y (D). Saves the row's mean and rstd for the backward pass.
static void layernorm_row_forward(float *y, float *mean, float *rstd, const float *x,
                                  int D, float eps) {
    float m = 0.0f;
    #pragma omp simd reduction(+:m)
    for (int i = 0; i < D; i++) m += x[i];
    m /= D;
    float v = 0.0f;   // two passes: the variance of (x - m), not E[x²] - m²,
    #pragma omp simd reduction(+:v)                                  // which cancels badly
    for (int i = 0; i < D; i++) { float d = x[i] - m; v += d * d; }
    v /= D;
    float s = 1.0f / sqrtf(v + eps);
    for (int i = 0; i < D; i++) y[i] = (x[i] - m) * s;
    *mean = m;
    *rstd = s;
}

// With x̂ = (x - mean)·rstd and g = dL/dx̂:
//   dL/dx = rstd · (g - mean(g) - x̂ · mean(g · x̂))
// (the two means are what subtracting the mean and dividing by the spread
// take back out of the gradient). g, x, dx (D); dx accumulates.
static void layernorm_row_backward(float *dx, const float *g, const float *x,
                                   float m, float s, int D) {
    float gmean = 0.0f, gxmean = 0.0f;
    #pragma omp simd reduction(+:gmean, gxmean)
    for (int i = 0; i < D; i++) {
        float xh = (x[i] - m) * s;
        gmean += g[i];
        gxmean += g[i] * xh;
    }
    gmean /= D; gxmean /= D;
    for (int i = 0; i < D; i++) {
        float xh = (x[i] - m) * s;
        dx[i] += s * (g[i] - gmean - xh * gxmean);
    }
}

// RMSNorm of one row: y = x · rstd · gain,  rstd = 1 / sqrt(mean(x²) + eps).
// No mean is subtracted, so there is one statistic per row instead of two.
// x, y, gain (D); gain may be NULL (none). Returns the row's rstd.
float rmsnorm_row_forward(float *y, const float *x, const float *gain, int D, float eps) {
    // EXERCISE(rmsnorm_forward) begin
    float ms = 0.0f;
    #pragma omp simd reduction(+:ms)
    for (int i = 0; i < D; i++) ms += x[i] * x[i];
    ms /= D;
    float s = 1.0f / sqrtf(ms + eps);
    if (gain) for (int i = 0; i < D; i++) y[i] = x[i] * s * gain[i];
    else      for (int i = 0; i < D; i++) y[i] = x[i] * s;
    return s;
    // EXERCISE end
}

// With g = dL/dy · gain (the gradient reaching x·rstd):
//   dL/dx = rstd · g - rstd³ · x · mean(g · x)
// dy, x, dx (D); gain (D) or NULL; s the row's rstd; dx accumulates.
void rmsnorm_row_backward(float *dx, const float *dy, const float *x, const float *gain,
                          float s, int D) {
    // EXERCISE(rmsnorm_backward) begin
    float gx = 0.0f;
    #pragma omp simd reduction(+:gx)
    for (int i = 0; i < D; i++) gx += dy[i] * (gain ? gain[i] : 1.0f) * x[i];
    gx /= D;
    float s3 = s * s * s;
    for (int i = 0; i < D; i++)
        dx[i] += s * dy[i] * (gain ? gain[i] : 1.0f) - s3 * x[i] * gx;
    // EXERCISE end
}

// ---------------------------------------------------------------------------
// The norms over R rows, one row after another on the calling thread. The
// model runs RMSNorm this way on each (image, head) pair's q and k, from
// inside attention's parallel loop (QK-norm), where starting threads would
// cost more than the rows (even a one-thread OpenMP region there takes
// microseconds). The block norms go through norm_modulate_forward below,
// threaded over the batch's rows.

// LayerNorm over R rows. inp, out (R, D); mean, rstd (R).
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                       int R, int D, float eps) {
    for (int r = 0; r < R; r++)
        layernorm_row_forward(out + (size_t)r * D, &mean[r], &rstd[r], inp + (size_t)r * D, D, eps);
}

// dinp, dout, inp (R, D); dinp accumulates.
void layernorm_backward(float *dinp, const float *dout, const float *inp,
                        const float *mean, const float *rstd, int R, int D) {
    for (int r = 0; r < R; r++)
        layernorm_row_backward(dinp + (size_t)r * D, dout + (size_t)r * D, inp + (size_t)r * D,
                               mean[r], rstd[r], D);
}

// RMSNorm over R rows. inp, out (R, D); gain (D) or NULL; rstd (R).
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *gain,
                     int R, int D, float eps) {
    for (int r = 0; r < R; r++)
        rstd[r] = rmsnorm_row_forward(out + (size_t)r * D, inp + (size_t)r * D, gain, D, eps);
}

//   dL/dgain += Σ_rows dL/dy · x · rstd
// inp, dout, dinp (R, D), dinp accumulates; gain, dgain (D), either may be NULL.
void rmsnorm_backward(float *dinp, float *dgain, const float *dout, const float *inp,
                      const float *rstd, const float *gain, int R, int D) {
    for (int r = 0; r < R; r++)
        rmsnorm_row_backward(dinp + (size_t)r * D, dout + (size_t)r * D, inp + (size_t)r * D,
                             gain, rstd[r], D);
    // The gain is shared by every row: sum the rows in order.
    if (dgain) {
        for (int r = 0; r < R; r++) {
            const float *x = inp + (size_t)r * D, *dy = dout + (size_t)r * D;  // (D) each
            float s = rstd[r];
            for (int i = 0; i < D; i++) dgain[i] += dy[i] * x[i] * s;          // dgain (D)
        }
    }
}

// ---------------------------------------------------------------------------
// adaLN modulation: out = x · (1 + scale) + shift, scale and shift per image.
// The model never calls this pair: it runs norm_modulate_forward/backward
// (below), which modulate each row while the norm has it in cache. The pair
// is kept as the reference the tests hold the fused layers to
// (test_layers.c), and as the modulation on its own for docs/tinydit.md.
void modulate_forward(float *out, const float *x, const float *shift, const float *scale,
                      int N, int L, int D, int stride) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++) {
        for (int l = 0; l < L; l++) {
            const float *sh = shift + (size_t)n * stride, *sc = scale + (size_t)n * stride;  // (D) image n's
            const float *xi = x + ((size_t)n * L + l) * D;  // (D) token l of image n
            float *o = out + ((size_t)n * L + l) * D;       // (D)
            for (int i = 0; i < D; i++) o[i] = xi[i] * (1.0f + sc[i]) + sh[i];
        }
    }
}

// dx += dout·(1 + scale); dshift[n] += Σ_l dout; dscale[n] += Σ_l dout·x.
// One image per iteration, tokens summed in order: deterministic.
void modulate_backward(float *dx, float *dshift, float *dscale, const float *dout,
                       const float *x, const float *scale, int N, int L, int D, int stride) {
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *sc = scale + (size_t)n * stride;                                  // (D)
        float *dsh = dshift + (size_t)n * stride, *dsc = dscale + (size_t)n * stride;  // (D) each
        for (int l = 0; l < L; l++) {
            const float *g = dout + ((size_t)n * L + l) * D;   // (D) each: token l of image n
            const float *xi = x + ((size_t)n * L + l) * D;
            float *dxi = dx + ((size_t)n * L + l) * D;
            for (int i = 0; i < D; i++) {
                dxi[i] += g[i] * (1.0f + sc[i]);
                dsh[i] += g[i];
                dsc[i] += g[i] * xi[i];
            }
        }
    }
}

// ---------------------------------------------------------------------------
// adaLN-Zero's gate: out = x + gate · branch, the gate per image.
void gate_residual_forward(float *out, const float *x, const float *branch, const float *gate,
                           int N, int L, int D, int stride) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++) {
        for (int l = 0; l < L; l++) {
            const float *g = gate + (size_t)n * stride;     // (D) image n's
            size_t r = ((size_t)n * L + l) * D;             // token l of image n
            for (int i = 0; i < D; i++) out[r + i] = x[r + i] + g[i] * branch[r + i];
        }
    }
}

// dbranch += gate · dout; dgate[n] += Σ_l dout · branch. With a gate of 0 the
// branch gets no gradient at all, while the gate gets the branch's output
// times the stream's gradient. One image per iteration, tokens summed in
// order: deterministic.
void gate_residual_backward(float *dbranch, float *dgate, const float *dout, const float *branch,
                            const float *gate, int N, int L, int D, int stride) {
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *g = gate + (size_t)n * stride;         // (D)
        float *dg = dgate + (size_t)n * stride;             // (D)
        for (int l = 0; l < L; l++) {
            size_t r = ((size_t)n * L + l) * D;
            for (int i = 0; i < D; i++) {
                dbranch[r + i] += g[i] * dout[r + i];
                dg[i] += dout[r + i] * branch[r + i];
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Norm and modulation fused: what the model runs. The functions above take
// each (N, L, D) tensor through memory several times: the norm writes y,
// modulate reads y back and writes out; backward, modulate writes dy and the
// norm reads it back. Here each token row is normalised (by the row
// functions above) and modulated while its D floats are in cache, and the
// backward recomputes x̂ from x and the saved statistics instead of keeping
// y at all. The same arithmetic in the same order as norm then modulate, so
// the results are the same bits (tests/test_layers.c compares them).
//
// kind: NORM_ROWS_LAYERNORM or NORM_ROWS_RMSNORM (no gain; mean unused).
// x, out, dout, dx (N, L, D); mean, rstd (N·L); shift, scale, dshift, dscale
// rows of `stride` floats per image, as in modulate_forward.
void norm_modulate_forward(float *out, NormRows kind, float *mean, float *rstd, const float *x,
                           const float *shift, const float *scale,
                           int N, int L, int D, int stride, float eps) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++) {
        for (int l = 0; l < L; l++) {
            size_t r = (size_t)n * L + l;                  // the token row
            const float *sh = shift + (size_t)n * stride, *sc = scale + (size_t)n * stride;  // (D)
            float *o = out + r * D;                        // (D): x̂ first, then modulated
            if (kind == NORM_ROWS_LAYERNORM) layernorm_row_forward(o, &mean[r], &rstd[r], x + r * D, D, eps);
            else rstd[r] = rmsnorm_row_forward(o, x + r * D, NULL, D, eps);
            for (int i = 0; i < D; i++) o[i] = o[i] * (1.0f + sc[i]) + sh[i];
        }
    }
}

// modulate_backward then the norm's row backward, row by row:
//   g = dout · (1 + scale)            the gradient reaching x̂ (one row, in g[])
//   dshift += dout,  dscale += dout · x̂
//   dx += the norm's backward of g
// One image per iteration, its tokens in order (dshift and dscale are sums
// over them): deterministic, as modulate_backward.
void norm_modulate_backward(float *dx, float *dshift, float *dscale, const float *dout,
                            NormRows kind, const float *x, const float *mean, const float *rstd,
                            const float *scale, int N, int L, int D, int stride) {
    // EXERCISE(norm_modulate_backward) begin
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *sc = scale + (size_t)n * stride;                                  // (D)
        float *dsh = dshift + (size_t)n * stride, *dsc = dscale + (size_t)n * stride;  // (D) each
        float g[D];                                                                    // (D) one row's dL/dx̂
        for (int l = 0; l < L; l++) {
            size_t r = (size_t)n * L + l;
            const float *dy = dout + r * D, *xr = x + r * D;   // (D) each
            int ln = kind == NORM_ROWS_LAYERNORM;
            float m = ln ? mean[r] : 0.0f, s = rstd[r];
            for (int i = 0; i < D; i++) {                     // modulate's backward
                float xh = ln ? (xr[i] - m) * s : xr[i] * s;
                g[i] = dy[i] * (1.0f + sc[i]);
                dsh[i] += dy[i];
                dsc[i] += dy[i] * xh;
            }
            if (ln) layernorm_row_backward(dx + r * D, g, xr, m, s, D);
            else rmsnorm_row_backward(dx + r * D, g, xr, NULL, s, D);
        }
    }
    // EXERCISE end
}
