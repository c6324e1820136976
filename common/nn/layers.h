// layers.h: every layer of TinyDiT, each as a forward function and the
// backward function that undoes it, side by side (llm.c style).
//
// Conventions, the same for every layer:
//   - shapes are written in comments, e.g. (N, L, D) = (images, tokens, width);
//     all arrays are dense, row-major float32.
//   - a backward function ACCUMULATES (+=) into every gradient it writes, both
//     parameter gradients (dweight, dbias) and input gradients (dinp). The
//     caller zeroes a gradient buffer before the first add. Accumulating is
//     what a residual connection or a shared input (c feeds every block) needs.
//     A dinp can start at zero in the call that writes it first instead
//     (CLEAR_DINP below): its rows are written, not added into.
//   - a NULL bias / gain means "this layer has none".
#pragma once
#include <stddef.h>

// The eps of every norm in the model: the blocks' LayerNorm or RMSNorm, the
// final norm and QK-norm (PyTorch prints it as eps=1e-06).
#define NORM_EPS 1e-6f

// An OpenMP loop over fewer floats than this runs on the calling thread:
// waking the other threads would cost more than they save. Every such loop
// computes each element or row on its own, so the threshold decides the
// speed only, never a result's bits.
#define OMP_MIN_FLOATS 32768

// What an exercise's body becomes in the workbook (`make exercises`,
// docs/exercises.md): a message naming the exercise, then abort(). The
// reference code never calls it; the bodies between `EXERCISE(name) begin`
// and `EXERCISE end` lines are what scripts/exercises.sh replaces.
_Noreturn void exercise_not_written(const char *name);

// ----------------------------------------------------------------------------
// Linear: out = inp · Wᵀ + b.  inp (R, IC), weight (OC, IC), bias (OC), out (R, OC)
void linear_forward(float *out, const float *inp, const float *weight, const float *bias,
                    int R, int IC, int OC);
// Where a backward's input gradient starts: ADD_TO_DINP adds into what dinp
// holds (zeros the caller cleared, or another layer's share); CLEAR_DINP
// gives what adding into cleared rows gives, bit for bit, without clearing
// them: each block's product writes its rows over whatever they held (a
// product's β = 0), so no pass over the buffer clears it beforehand (for a
// buffer this call writes first).
typedef enum { ADD_TO_DINP, CLEAR_DINP } DinpStart;

void linear_backward(float *dinp, float *dweight, float *dbias,
                     const float *dout, const float *inp, const float *weight,
                     int R, int IC, int OC, DinpStart start);

// ----------------------------------------------------------------------------
// LayerNorm without affine parameters: out = (x - mean) / sqrt(var + eps).
// inp, out (R, D); mean, rstd (R) are saved for the backward pass.
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                       int R, int D, float eps);
void layernorm_backward(float *dinp, const float *dout, const float *inp,
                        const float *mean, const float *rstd, int R, int D);

// RMSNorm: out = x / sqrt(mean(x²) + eps) · gain.  gain (D) may be NULL.
// inp, out (R, D); rstd (R) saved for backward; dgain (D) may be NULL.
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *gain,
                     int R, int D, float eps);
void rmsnorm_backward(float *dinp, float *dgain, const float *dout, const float *inp,
                      const float *rstd, const float *gain, int R, int D);
// One row of each: x, y, dy, dx (D); the forward returns the row's rstd,
// the backward adds into dx. rmsnorm_forward and _backward loop over these.
float rmsnorm_row_forward(float *y, const float *x, const float *gain, int D, float eps);
void rmsnorm_row_backward(float *dx, const float *dy, const float *x, const float *gain,
                          float s, int D);
// The gain's gradient over R rows: dgain (D) += Σ_rows dy · x · rstd (nothing when NULL).
void rmsnorm_gain_backward(float *dgain, const float *dout, const float *inp, const float *rstd,
                           int R, int D);

// adaLN-Zero's gated residual: out[n,l,:] = x[n,l,:] + gate[n,:] · branch[n,l,:],
// the branch (a block half's output) scaled by its image's gate before it
// joins the stream. x, branch, out (N, L, D); gate rows of `stride` floats, as
// shift and scale below. The backward adds gate · dout into dbranch and
// Σ_l dout · branch into dgate; x's gradient is dout itself, which the
// caller's residual stream already carries.
void gate_residual_forward(float *out, const float *x, const float *branch, const float *gate,
                           int N, int L, int D, int stride);
void gate_residual_backward(float *dbranch, float *dgate, const float *dout, const float *branch,
                            const float *gate, int N, int L, int D, int stride);

// A norm and the adaLN modulation in one pass, what the model runs:
// out = norm(x) · (1 + scale) + shift, the norm chosen by `kind`: LayerNorm
// (saves mean and rstd) or RMSNorm without gain (saves rstd; mean is not
// touched), by the same per-row functions as above. The backward recomputes
// norm(x) from x, mean and rstd instead of reading it back.
// x, out (N, L, D); mean, rstd (N·L); shift and scale are rows of a
// per-image tensor whose row stride is `stride` floats (slices of the ada
// Linear's output).
typedef enum { NORM_ROWS_LAYERNORM, NORM_ROWS_RMSNORM } NormRows;
void norm_modulate_forward(float *out, NormRows kind, float *mean, float *rstd, const float *x,
                           const float *shift, const float *scale,
                           int N, int L, int D, int stride, float eps);
void norm_modulate_backward(float *dx, float *dshift, float *dscale, const float *dout,
                            NormRows kind, const float *x, const float *mean, const float *rstd,
                            const float *scale, int N, int L, int D, int stride);

// ----------------------------------------------------------------------------
// Elementwise activations. n = number of elements.
void gelu_forward(float *out, const float *inp, size_t n);        // exact (erf), vectorised
void gelu_backward(float *dinp, const float *dout, const float *inp, size_t n, DinpStart start);
void silu_forward(float *out, const float *inp, size_t n);        // x · sigmoid(x)
void silu_backward(float *dinp, const float *dout, const float *inp, size_t n);
// SwiGLU's gating: out = silu(gate) · value. gate, value, out (n)
void swiglu_forward(float *out, const float *gate, const float *value, size_t n);
void swiglu_backward(float *dgate, float *dvalue, const float *dout,
                     const float *gate, const float *value, size_t n);

// ----------------------------------------------------------------------------
// The feed-forward half of a block (layers.c), GELU's or SwiGLU's (step 4),
// on R token rows: inp, out (R, D), hidden width `hidden`. Its hidden buffers
// are passed in (the model hands it a block's activations, step 4 its own),
// (R, hidden) each: pre = fc1's output or SwiGLU's gate, val = SwiGLU's value (unused by
// GELU), act = the last Linear's input. The backward's weight gradients
// accumulate, and dinp does from `start` (its first Linear's, as
// linear_backward's). dh is its own work space, cleared where it writes it
// (GELU's) or before (SwiGLU's pre and val).
typedef struct { float *pre, *val, *act; } MlpHidden;
// out = fc2(GELU(fc1(inp))).  fc1 (hidden, D), fc2 (D, hidden)
void gelu_mlp_forward(float *out, MlpHidden h, const float *inp, const float *fc1_w,
                      const float *fc1_b, const float *fc2_w, const float *fc2_b,
                      int R, int D, int hidden);
void gelu_mlp_backward(float *dinp, float *dfc1_w, float *dfc1_b, float *dfc2_w, float *dfc2_b,
                       MlpHidden dh, const float *dout, const float *inp, MlpHidden h,
                       const float *fc1_w, const float *fc2_w, int R, int D, int hidden,
                       DinpStart start);
// out = w3(silu(w1(inp)) · w2(inp)).  w1, w2 (hidden, D), w3 (D, hidden)
void swiglu_mlp_forward(float *out, MlpHidden h, const float *inp, const float *w1_w,
                        const float *w1_b, const float *w2_w, const float *w2_b, const float *w3_w,
                        const float *w3_b, int R, int D, int hidden);
void swiglu_mlp_backward(float *dinp, float *dw1_w, float *dw1_b, float *dw2_w, float *dw2_b,
                         float *dw3_w, float *dw3_b, MlpHidden dh, const float *dout,
                         const float *inp, MlpHidden h, const float *w1_w, const float *w2_w,
                         const float *w3_w, int R, int D, int hidden, DinpStart start);

// ----------------------------------------------------------------------------
// 2D RoPE. Tables cos, sin (n_prefix + grid², head_dim): the first half of a
// head's pairs turn with the token's row, the second half with its column;
// pair i of an axis turns by pos · base^(-i / (head_dim/4)). n_prefix leading
// tokens get angle 0 (no rotation).
void rope2d_tables(float *cos_t, float *sin_t, int grid, int head_dim, float base, int n_prefix);
// out = x·cos + rot(x)·sin, rot(x)₂ᵢ = -x₂ᵢ₊₁, rot(x)₂ᵢ₊₁ = x₂ᵢ.
// x, out (B, L, hd) where B is any number of (image, head) slices.
void rope_forward(float *out, const float *x, const float *cos_t, const float *sin_t,
                  int B, int L, int hd);
void rope_backward(float *dx, const float *dout, const float *cos_t, const float *sin_t,
                   int B, int L, int hd);

// QueryKeyNorm: one RMSNorm for queries and one for keys over head_dim, each
// with a gain of head_dim shared by all heads. attention_forward and
// attention_backward call these two functions for each (image, head).
typedef struct {
    int head_dim;
    float eps;
    float *q_gain, *k_gain;    // (head_dim) each, owned by the caller (model params)
} QueryKeyNorm;
QueryKeyNorm qk_norm_make(int head_dim, float eps, float *q_gain, float *k_gain);
// q, k (N, heads, L, head_dim) -> q_out, k_out; q_rstd, k_rstd (N*heads*L) saved.
void qk_norm_forward(const QueryKeyNorm *m, float *q_out, float *k_out,
                     float *q_rstd, float *k_rstd, const float *q, const float *k,
                     int N, int heads, int L);
void qk_norm_backward(const QueryKeyNorm *m, float *dq, float *dk, float *dq_gain, float *dk_gain,
                      const float *dq_out, const float *dk_out, const float *q, const float *k,
                      const float *q_rstd, const float *k_rstd, int N, int heads, int L);

// ----------------------------------------------------------------------------
// Multi-head self-attention core, everything between the qkv linear
// and the proj linear:
//   split qkv (N, L, 3D) into q, k, v (N, H, L, hd); QK-norm (if q_gain);
//   RoPE (if cos_t); att = softmax(q·kᵀ/√hd) (N, H, L, L); y = att·v; merge
//   heads -> out (N, L, D).
// One (image, head) pair at a time, its L×L scores in a per-thread work area
// (matmul.h). The saved tensors live in an AttentionCache so
// backward can reuse them.
typedef struct {
    const float *qkv;       // (N, L, 3D) the forward's input: v and the raw q, k (kept by the caller)
    float *q_rstd, *k_rstd; // (N, H, L) QK-norm statistics
    float *q, *k;           // (N, H, L, hd) after QK-norm and RoPE: what the scores use
    float *row_max, *row_inv; // (N, H, L) each score row's max and 1/Σexp: the softmax again
    float *att;             // (N, H, L, L) softmax probabilities, kept only when non-NULL
    float *work;            // per thread: scores, gradients, spares (work_slots areas)
    int work_slots;         // how many threads the loops may use
    float max_logit;        // largest |q·k|/√hd of the last forward
} AttentionCache;
// The softmax over each row of the (L, L) scores, in place, and its backward
// (attention.c gives the formulas); attention_forward and _backward call them
// for each (image, head).
float softmax_forward(float *att, float *row_max, float *row_inv, int L);
// The probabilities of the scores att (L, L), in place, from each row's max
// and 1/Σexp, saved by softmax_forward: what the backward computes again.
void softmax_rows_with(float *att, const float *row_max, const float *row_inv, int L);
void softmax_backward(float *d, const float *att, int L, float scale);
size_t attention_cache_floats(int N, int L, int D, int H, int qk_norm);
void attention_cache_init(AttentionCache *c, float *mem, int N, int L, int D, int H, int qk_norm);
void attention_forward(float *out, AttentionCache *c, const float *qkv,
                       const float *q_gain, const float *k_gain, float qk_eps,
                       const float *cos_t, const float *sin_t, int N, int L, int D, int H);
// dqkv (N, L, 3D) accumulates from `start` (as linear_backward's dinp:
// CLEAR_DINP writes it whole, each pair its own columns); dq_gain, dk_gain
// accumulate; scratch holds attention_backward_scratch_floats floats.
size_t attention_backward_scratch_floats(int N, int L, int D, int H);
void attention_backward(float *dqkv, float *dq_gain, float *dk_gain, const float *dout,
                        const AttentionCache *c, float *scratch,
                        const float *q_gain, const float *k_gain,
                        const float *cos_t, const float *sin_t, int N, int L, int D, int H,
                        DinpStart start);

// ----------------------------------------------------------------------------
// Patches. img (N, C, S, S) <-> tokens (N, L, C·p·p), L = (S/p)², tokens
// row-major over the grid, each patch vector ordered (channel, row, col).
void patchify(float *tokens, const float *img, int N, int C, int S, int p);
void unpatchify(float *img, const float *tokens, int N, int C, int S, int p);

// Learned position tables: h[n, r·g + c, :] += pos_row[r, :] + pos_col[c, :].
void pos_add_forward(float *h, const float *pos_row, const float *pos_col, int N, int g, int D);
void pos_add_backward(float *dpos_row, float *dpos_col, const float *dh, int N, int g, int D);

// Class labels: c[n, :] += table[y[n], :], a row of the table gathered into
// each image's condition. c (N, D), table (classes + 1, D), y (N) each in
// 0..classes. The backward scatters: each row used adds the gradient of
// every image that used it, dtable[y[n], :] += dc[n, :]; rows no image used
// get nothing (the labels are an input, not learned: no dy).
void label_embed_forward(float *c, const float *table, const int *y, int N, int D);
void label_embed_backward(float *dtable, const float *dc, const int *y, int N, int D);

// Sinusoidal timestep features: e[n] = [cos(1000·t·f_j), sin(1000·t·f_j)],
// f_j = exp(-ln(10000)·j/(F/2)). t (N), e (N, F). No parameters, no backward
// (t is an input, not learned).
void timestep_embedding(float *e, const float *t, int N, int F);
