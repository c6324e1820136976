// layers.c: the layers of a block, each forward beside its backward, in
// the order the block calls them: the Linear, the norms and the adaLN
// modulation that follows them, adaLN-Zero's gate, the activations, and
// the MLP built of them. Attention has a file of its own (attention.c).
#include <math.h>
#include <string.h>
#include "fastmath.h"
#include "layers.h"
#include "matmul.h"

// ---------------------------------------------------------------------------
// Linear: y = x·Wᵀ + b. Each product is cut into blocks of a fixed size,
// one matmul each, spread over the threads: the numbers do not depend on
// the thread count (matmul.h says how).
#define ROW_BLOCK 128   // rows of inp / out per task (forward and dinp)
#define COL_BLOCK 64    // output features per task (dweight, dbias)

void linear_forward(float *out, const float *inp, const float *weight, const float *bias,
                    int R, int IC, int OC) {
    int nblocks = (R + ROW_BLOCK - 1) / ROW_BLOCK;
    #pragma omp parallel for schedule(runtime)
    for (int b = 0; b < nblocks; b++) {
        int r0 = b * ROW_BLOCK, rows = R - r0 < ROW_BLOCK ? R - r0 : ROW_BLOCK;
        float *o = out + (size_t)r0 * OC;                            // (rows, OC)
        // out (rows, OC) = inp (rows, IC) · weightᵀ (IC, OC)
        matmul(0, 1, rows, OC, IC, 1.0f, inp + (size_t)r0 * IC, IC, weight, IC, 0.0f, o, OC);
        if (bias)
            for (int r = 0; r < rows; r++)
                for (int j = 0; j < OC; j++) o[(size_t)r * OC + j] += bias[j];
    }
}

void linear_backward(float *dinp, float *dweight, float *dbias,
                     const float *dout, const float *inp, const float *weight,
                     int R, int IC, int OC, DinpStart start) {
    int row_blocks = dinp ? (R + ROW_BLOCK - 1) / ROW_BLOCK : 0;
    int col_blocks = dweight || dbias ? (OC + COL_BLOCK - 1) / COL_BLOCK : 0;
    // one parallel region for both products: a thread done with dinp's blocks
    // goes on to dweight's (nowait), as they write different arrays
    #pragma omp parallel
    {
        // dinp (R, IC) += dout (R, OC) · weight (OC, IC), by blocks of rows
        #pragma omp for schedule(runtime) nowait
        for (int b = 0; b < row_blocks; b++) {
            int r0 = b * ROW_BLOCK, rows = R - r0 < ROW_BLOCK ? R - r0 : ROW_BLOCK;
            float *di = dinp + (size_t)r0 * IC;                          // (rows, IC)
            float beta = start == CLEAR_DINP ? 0.0f : 1.0f;              // 0: di's old rows are not read
            matmul(0, 0, rows, IC, OC, 1.0f, dout + (size_t)r0 * OC, OC, weight, IC, beta, di, IC);
        }
        // dweight (OC, IC) += doutᵀ (OC, R) · inp (R, IC), and dbias (OC) += Σ_r dout[r, :],
        // by blocks of output features: each block sums over all R rows in order.
        #pragma omp for schedule(runtime) nowait
        for (int b = 0; b < col_blocks; b++) {
            int o0 = b * COL_BLOCK, cols = OC - o0 < COL_BLOCK ? OC - o0 : COL_BLOCK;
            if (dweight)
                matmul(1, 0, cols, IC, R, 1.0f, dout + o0, OC, inp, IC, 1.0f, dweight + (size_t)o0 * IC, IC);
            if (dbias) {
                float acc[COL_BLOCK] = { 0 };                        // (cols)
                for (int r = 0; r < R; r++) {
                    const float *d = dout + (size_t)r * OC + o0;     // (cols) of row r
                    for (int j = 0; j < cols; j++) acc[j] += d[j];
                }
                for (int j = 0; j < cols; j++) dbias[o0 + j] += acc[j];
            }
        }
    }
}

// ---------------------------------------------------------------------------
// LayerNorm and RMSNorm over the last dimension (no affine parameters for
// the block norms: adaLN supplies scale and shift), each written once, for
// one row of D floats: the functions over R rows and the fused norm and
// modulation below call these four, so the arithmetic the steps teach is
// the arithmetic the model trains with. The sums run in vector lanes
// (`omp simd reduction`), in an order fixed by the build, not the threads.

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
// The norms over R rows, one row after another on the calling thread (the
// steps run these; the model's block norms are the fused ones below).

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
    rmsnorm_gain_backward(dgain, dout, inp, rstd, R, D);
}

// The gain is shared by every row: dgain (D) += Σ_rows dy · x · rstd, the
// rows summed in order. dgain NULL: nothing to do.
void rmsnorm_gain_backward(float *dgain, const float *dout, const float *inp, const float *rstd,
                           int R, int D) {
    if (!dgain) return;
    for (int r = 0; r < R; r++) {
        const float *x = inp + (size_t)r * D, *dy = dout + (size_t)r * D;  // (D) each
        float s = rstd[r];
        for (int i = 0; i < D; i++) dgain[i] += dy[i] * x[i] * s;          // dgain (D)
    }
}

// ---------------------------------------------------------------------------
// A norm, then the adaLN modulation out = x̂ · (1 + scale) + shift, scale
// and shift per image: each token row is normalised (by the row functions
// above) and modulated while its D floats are in cache, and the backward
// recomputes x̂ from x and the saved statistics instead of keeping it. The
// same bits as a norm then a modulation (tests/test_layers.c compares them).
//
// kind: NORM_ROWS_LAYERNORM or NORM_ROWS_RMSNORM (no gain; mean unused).
// x, out, dout, dx (N, L, D); mean, rstd (N·L); shift, scale, dshift, dscale
// rows of `stride` floats per image (layers.h).
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

// The modulation's backward, then the norm's, row by row:
//   g = dout · (1 + scale)            the gradient reaching x̂ (one row, in g[])
//   dshift += dout,  dscale += dout · x̂
//   dx += the norm's backward of g
// One image per iteration, its tokens in order (dshift and dscale are sums
// over them): deterministic.
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
// Elementwise activations: GELU (exact, with erf), SiLU, and SwiGLU's gate.
// inp, out, dout, dinp (and gate, value) are flat arrays of n floats,
// whatever their shape in the model ((N, L, hidden) in the MLP, (N, D) in
// the time embedding).
#define OMP_IF_BIG if (n > OMP_MIN_FLOATS)

// GELU(x) = x · Φ(x) = 0.5 · x · (1 + erf(x / √2)), and its derivative
// GELU'(x) = Φ(x) + x · φ(x), φ(x) = e^(−x²/2) / √(2π) the normal density.
// With fastmath.h's erf and exp, which vectorise (libm's do not); e^(−x²/2)
// serves both erf and φ.
void gelu_forward(float *out, const float *inp, size_t n) {
    #pragma omp parallel for simd schedule(static) OMP_IF_BIG
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float u = x * (float)M_SQRT1_2;
        out[i] = 0.5f * x * (1.0f + erf_fast_with_exp(u, exp_fast(-u * u)));
    }
}

// GELU'(x) = Φ(x) + x·φ(x): the normal distribution's cdf and density
static inline float gelu_slope(float x) {
    const float inv_sqrt_2pi = 0.3989422804014327f;
    float u = x * (float)M_SQRT1_2;
    float e = exp_fast(-u * u);                 // e^(−x²/2)
    float cdf = 0.5f * (1.0f + erf_fast_with_exp(u, e));
    return cdf + x * inv_sqrt_2pi * e;
}

void gelu_backward(float *dinp, const float *dout, const float *inp, size_t n, DinpStart start) {
    if (start == CLEAR_DINP) {   // 0 + g, as in a cleared buffer, without reading it first
        #pragma omp parallel for simd schedule(static) OMP_IF_BIG
        for (size_t i = 0; i < n; i++) dinp[i] = 0.0f + dout[i] * gelu_slope(inp[i]);
    } else {
        #pragma omp parallel for simd schedule(static) OMP_IF_BIG
        for (size_t i = 0; i < n; i++) dinp[i] += dout[i] * gelu_slope(inp[i]);
    }
}

// σ(x) = 1 / (1 + e^(−x)), with the vectorisable exp
static inline float sigmoidf(float x) {
    return 1.0f / (1.0f + exp_fast(-x));
}

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

// ---------------------------------------------------------------------------
// The MLP half of a block, GELU's or SwiGLU's, on R token rows: a chain of
// the layers above. The block runs one of the two, as the config's mlp
// says; step 4 runs both alone on block 0's weights, so the FFN the step
// teaches is the one the model trains.

// inp (R, D) -> out (R, D) through the hidden width: GELU(fc1) then fc2,
// keeping in h what the backward needs (h.val is unused).
void gelu_mlp_forward(float *out, MlpHidden h, const float *inp, const float *fc1_w,
                      const float *fc1_b, const float *fc2_w, const float *fc2_b,
                      int R, int D, int hidden) {
    linear_forward(h.pre, inp, fc1_w, fc1_b, R, D, hidden);   // (R, hidden)
    gelu_forward(h.act, h.pre, (size_t)R * hidden);           // (R, hidden)
    linear_forward(out, h.act, fc2_w, fc2_b, R, hidden, D);   // (R, D)
}

// The same chain in reverse, from dout (R, D) = dL/d(out). Like every
// layer's backward it adds into its outputs: the weight gradients must start
// at zero, and dinp (R, D) too unless `start` is CLEAR_DINP. The hidden
// gradients dh (R, hidden each) are written by this chain alone, so the
// calls that write them clear them.
void gelu_mlp_backward(float *dinp, float *dfc1_w, float *dfc1_b, float *dfc2_w, float *dfc2_b,
                       MlpHidden dh, const float *dout, const float *inp, MlpHidden h,
                       const float *fc1_w, const float *fc2_w, int R, int D, int hidden,
                       DinpStart start) {
    linear_backward(dh.act, dfc2_w, dfc2_b, dout, h.act, fc2_w, R, hidden, D, CLEAR_DINP);
    gelu_backward(dh.pre, dh.act, h.pre, (size_t)R * hidden, CLEAR_DINP);
    linear_backward(dinp, dfc1_w, dfc1_b, dh.pre, inp, fc1_w, R, D, hidden, start);
}

// SwiGLU's: silu(w1(inp)) · w2(inp), then w3. h.pre keeps the gate w1(inp),
// h.val the value w2(inp), h.act their product.
void swiglu_mlp_forward(float *out, MlpHidden h, const float *inp, const float *w1_w,
                        const float *w1_b, const float *w2_w, const float *w2_b, const float *w3_w,
                        const float *w3_b, int R, int D, int hidden) {
    linear_forward(h.pre, inp, w1_w, w1_b, R, D, hidden);     // (R, hidden) gate
    linear_forward(h.val, inp, w2_w, w2_b, R, D, hidden);     // (R, hidden) value
    swiglu_forward(h.act, h.pre, h.val, (size_t)R * hidden);  // (R, hidden)
    linear_forward(out, h.act, w3_w, w3_b, R, hidden, D);     // (R, D)
}

// In reverse, as gelu_mlp_backward does. swiglu_backward adds into the
// gate's and the value's gradients, so they are cleared before it.
void swiglu_mlp_backward(float *dinp, float *dw1_w, float *dw1_b, float *dw2_w, float *dw2_b,
                         float *dw3_w, float *dw3_b, MlpHidden dh, const float *dout,
                         const float *inp, MlpHidden h, const float *w1_w, const float *w2_w,
                         const float *w3_w, int R, int D, int hidden, DinpStart start) {
    linear_backward(dh.act, dw3_w, dw3_b, dout, h.act, w3_w, R, hidden, D, CLEAR_DINP);
    parallel_clear(dh.pre, (size_t)R * hidden);
    parallel_clear(dh.val, (size_t)R * hidden);
    swiglu_backward(dh.pre, dh.val, dh.act, h.pre, h.val, (size_t)R * hidden);
    // inp feeds both projections, so its gradient is the sum of the two
    linear_backward(dinp, dw1_w, dw1_b, dh.pre, inp, w1_w, R, D, hidden, start);
    linear_backward(dinp, dw2_w, dw2_b, dh.val, inp, w2_w, R, D, hidden, ADD_TO_DINP);
}
