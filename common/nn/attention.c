// attention.c: multi-head self-attention, everything between the qkv
// Linear and the proj Linear, and what it runs inside: QK-norm, the softmax
// and 2D RoPE, each forward beside its backward. One OpenMP loop covers the
// (image, head) pairs, each pair's L×L scores in its thread's work area.
#include <math.h>
#include <string.h>
#include "fastmath.h"
#include "layers.h"
#include "matmul.h"

// ---------------------------------------------------------------------------
// QueryKeyNorm: RMSNorm over head_dim for q and for k, one gain each, shared
// by all heads. q, k (N, heads, L, hd) are just (N·heads·L) rows of hd, each
// normalised by the row RMSNorm (layers.c).
QueryKeyNorm qk_norm_make(int head_dim, float eps, float *q_gain, float *k_gain) {
    QueryKeyNorm m = { head_dim, eps, q_gain, k_gain };
    return m;
}

void qk_norm_forward(const QueryKeyNorm *m, float *q_out, float *k_out,
                     float *q_rstd, float *k_rstd, const float *q, const float *k,
                     int N, int heads, int L) {
    for (int r = 0; r < N * heads * L; r++) {   // one (image, head, token) row of head_dim each
        size_t o = (size_t)r * m->head_dim;
        q_rstd[r] = rmsnorm_row_forward(q_out + o, q + o, m->q_gain, m->head_dim, m->eps);
        k_rstd[r] = rmsnorm_row_forward(k_out + o, k + o, m->k_gain, m->head_dim, m->eps);
    }
}

void qk_norm_backward(const QueryKeyNorm *m, float *dq, float *dk, float *dq_gain, float *dk_gain,
                      const float *dq_out, const float *dk_out, const float *q, const float *k,
                      const float *q_rstd, const float *k_rstd, int N, int heads, int L) {
    // EXERCISE(qk_norm_backward) begin
    int rows = N * heads * L, hd = m->head_dim;   // dq, dk, dq_out, dk_out (rows, hd); dq_gain, dk_gain (hd)
    for (int r = 0; r < rows; r++) {
        size_t o = (size_t)r * hd;
        rmsnorm_row_backward(dq + o, dq_out + o, q + o, m->q_gain, q_rstd[r], hd);
        rmsnorm_row_backward(dk + o, dk_out + o, k + o, m->k_gain, k_rstd[r], hd);
    }
    rmsnorm_gain_backward(dq_gain, dq_out, q, q_rstd, rows, hd);
    rmsnorm_gain_backward(dk_gain, dk_out, k, k_rstd, rows, hd);
    // EXERCISE end
}

// ---------------------------------------------------------------------------
// The softmax of the pair's scores, row by row in place, from the scores'
// row max and 1/sum: softmax_forward's arithmetic, so the backward's
// recomputed probabilities are the forward's, bit for bit.
void softmax_rows_with(float *att, const float *row_max, const float *row_inv, int L) {
    for (int i = 0; i < L; i++) {
        float *row = att + (size_t)i * L, mx = row_max[i], inv = row_inv[i];
        for (int j = 0; j < L; j++) row[j] = exp_fast(row[j] - mx) * inv;
    }
}

// The softmax of every row of att (L, L), in place: p_ij = exp(s_ij − m_i) / Σ_k exp(s_ik − m_i),
// m_i the row's max (subtracted first, so exp never overflows). Saves each
// row's max and 1/sum in row_max, row_inv (L) for the backward; returns the
// largest |score| of all rows (the scorecard's max logit, QK-norm's reason
// to exist).
float softmax_forward(float *att, float *row_max, float *row_inv, int L) {
    // EXERCISE(softmax_forward) begin
    float row_max_abs = 0.0f;
    for (int i = 0; i < L; i++) {
        float *row = att + (size_t)i * L;   // (L) query i's scores, then its probabilities
        float mx = -INFINITY, mn = INFINITY;
        #pragma omp simd reduction(max:mx) reduction(min:mn)   // in vector lanes, as layers.c's sums
        for (int j = 0; j < L; j++) {
            mx = row[j] > mx ? row[j] : mx;
            mn = row[j] < mn ? row[j] : mn;
        }
        float big = fabsf(mx) > fabsf(mn) ? fabsf(mx) : fabsf(mn);
        if (big > row_max_abs) row_max_abs = big;
        float sum = 0.0f;
        #pragma omp simd reduction(+:sum)
        for (int j = 0; j < L; j++) {
            row[j] = exp_fast(row[j] - mx);
            sum += row[j];
        }
        float inv = 1.0f / sum;
        for (int j = 0; j < L; j++) row[j] *= inv;   // as softmax_rows_with computes them again
        row_max[i] = mx;
        row_inv[i] = inv;
    }
    return row_max_abs;
    // EXERCISE end
}

// The softmax's backward, row by row, in place: on entry d (L, L) holds
// dL/dp, on return dL/ds · scale, with p = att the forward's probabilities:
//   dL/ds_ij = p_ij · (dL/dp_ij − Σ_k p_ik · dL/dp_ik)
// (scale: the 1/√hd the scores were multiplied by, applied here in passing).
void softmax_backward(float *d, const float *att, int L, float scale) {
    // EXERCISE(softmax_backward) begin
    for (int i = 0; i < L; i++) {
        float *dr = d + (size_t)i * L;
        const float *ar = att + (size_t)i * L;
        float dot = 0.0f;
        #pragma omp simd reduction(+:dot)
        for (int j = 0; j < L; j++) dot += ar[j] * dr[j];
        for (int j = 0; j < L; j++) dr[j] = ar[j] * (dr[j] - dot) * scale;
    }
    // EXERCISE end
}

// ---------------------------------------------------------------------------
// 2D RoPE tables (n_prefix + g², hd). Pairs 0 .. hd/4-1 turn with the row,
// pairs hd/4 .. hd/2-1 with the column; within an axis pair i turns by
// pos · base^(-i/(hd/4)): pair 0 by one radian per step, the last pair slowest.
// Both features of a pair share one angle, so the table repeats it twice.
void rope2d_tables(float *cos_t, float *sin_t, int grid, int head_dim, float base, int n_prefix) {
    // EXERCISE(rope2d_tables) begin
    int quarter = head_dim / 4, L = n_prefix + grid * grid;
    for (int tok = 0; tok < L; tok++) {
        int idx = tok - n_prefix;
        float row = idx < 0 ? 0.0f : (float)(idx / grid);
        float col = idx < 0 ? 0.0f : (float)(idx % grid);
        for (int i = 0; i < head_dim / 2; i++) {
            int k = i < quarter ? i : i - quarter;
            float inv_freq = powf(base, -(float)k / (float)quarter);
            float ang = (i < quarter ? row : col) * inv_freq;
            float c = cosf(ang), s = sinf(ang);
            cos_t[(size_t)tok * head_dim + 2 * i] = cos_t[(size_t)tok * head_dim + 2 * i + 1] = c;
            sin_t[(size_t)tok * head_dim + 2 * i] = sin_t[(size_t)tok * head_dim + 2 * i + 1] = s;
        }
    }
    // EXERCISE end
}

// Rotate every pair (x₂ᵢ, x₂ᵢ₊₁) by its angle:
//   out₂ᵢ   = x₂ᵢ·cos − x₂ᵢ₊₁·sin
//   out₂ᵢ₊₁ = x₂ᵢ₊₁·cos + x₂ᵢ·sin
// Safe in place (out == x). x (B, L, hd): B independent (image, head) slices.
void rope_forward(float *out, const float *x, const float *cos_t, const float *sin_t,
                  int B, int L, int hd) {
    for (int b = 0; b < B; b++)
        for (int l = 0; l < L; l++) {
            const float *xi = x + ((size_t)b * L + l) * hd;
            float *o = out + ((size_t)b * L + l) * hd;
            const float *c = cos_t + (size_t)l * hd, *s = sin_t + (size_t)l * hd;
            for (int i = 0; i < hd; i += 2) {
                float a = xi[i], bb = xi[i + 1];
                o[i] = a * c[i] - bb * s[i];
                o[i + 1] = bb * c[i + 1] + a * s[i + 1];
            }
        }
}

// A rotation's inverse is its transpose, the rotation by −angle:
//   dx₂ᵢ += d₂ᵢ·cos + d₂ᵢ₊₁·sin,  dx₂ᵢ₊₁ += d₂ᵢ₊₁·cos − d₂ᵢ·sin
// dx must not alias dout (it accumulates).
void rope_backward(float *dx, const float *dout, const float *cos_t, const float *sin_t,
                   int B, int L, int hd) {
    // EXERCISE(rope_backward) begin
    for (int b = 0; b < B; b++)
        for (int l = 0; l < L; l++) {
            const float *d = dout + ((size_t)b * L + l) * hd;
            float *o = dx + ((size_t)b * L + l) * hd;
            const float *c = cos_t + (size_t)l * hd, *s = sin_t + (size_t)l * hd;
            for (int i = 0; i < hd; i += 2) {
                o[i] += d[i] * c[i] + d[i + 1] * s[i + 1];
                o[i + 1] += d[i + 1] * c[i + 1] - d[i] * s[i];
            }
        }
    // EXERCISE end
}

// ---------------------------------------------------------------------------
// The attention works one (image, head) pair at a time, and keeps the pair's
// L×L scores in its thread's work area while it uses them, instead of
// writing every pair's scores to one (N, H, L, L) tensor; the backward
// computes them again from q and k, the way FlashAttention does
// (docs/performance.md). The work area of a thread: the scores and their
// gradient (L, L) each, and seven (L, hd) buffers (dq, dk, two spares for
// RoPE and QK-norm, the raw q and k, and matmul_bt's transposed operand).
typedef struct { float *att, *datt, *dq, *dk, *dq2, *dk2, *q_raw, *k_raw, *t; } PairWork;

static size_t work_floats_per_thread(int L, int hd) {
    return 2 * (size_t)L * L + 7 * (size_t)L * hd;
}

static PairWork pair_work(const AttentionCache *c, int L, int hd) {
    size_t LL = (size_t)L * L, Lhd = (size_t)L * hd;
    float *w = work_area(c->work, work_floats_per_thread(L, hd));
    PairWork p = { w, w + LL, w + 2 * LL, w + 2 * LL + Lhd, w + 2 * LL + 2 * Lhd, w + 2 * LL + 3 * Lhd,
                   w + 2 * LL + 4 * Lhd, w + 2 * LL + 5 * Lhd, w + 2 * LL + 6 * Lhd };
    return p;
}

// This head's q and k, copied out of one image's qkv rows (row0: its q in
// token 0's row, rows 3D apart) into q, k (L, hd) each.
static void copy_head_qk(float *q, float *k, const float *row0, int L, int D, int hd) {
    for (int l = 0; l < L; l++) {
        const float *row = row0 + (size_t)l * 3 * D;   // token l: its q, then D later its k
        for (int j = 0; j < hd; j++) {
            q[(size_t)l * hd + j] = row[j];
            k[(size_t)l * hd + j] = row[D + j];
        }
    }
}

size_t attention_cache_floats(int N, int L, int D, int H, int qk_norm) {
    size_t per = (size_t)N * L * D;             // one (N, H, L, hd) tensor
    size_t rows = (size_t)N * H * L;            // one number per (image, head, query)
    size_t n = 2 * per + 2 * rows;              // q, k, row max and 1/sum
    n += (size_t)work_slots() * work_floats_per_thread(L, D / H);
    if (qk_norm) n += 2 * rows;                 // q_rstd, k_rstd
    return n + (size_t)N * H * L * L;           // att, last: a cache without it stops before
}

void attention_cache_init(AttentionCache *c, float *mem, int N, int L, int D, int H, int qk_norm) {
    size_t per = (size_t)N * L * D, rows = (size_t)N * H * L;
    memset(c, 0, sizeof *c);
    c->q = mem; mem += per;
    c->k = mem; mem += per;
    c->row_max = mem; mem += rows;
    c->row_inv = mem; mem += rows;
    c->work_slots = work_slots();
    c->work = mem; mem += (size_t)c->work_slots * work_floats_per_thread(L, D / H);
    if (qk_norm) {
        c->q_rstd = mem; mem += rows;
        c->k_rstd = mem; mem += rows;
    }
    c->att = mem;
}

// Forward: out (N, L, D) from qkv (N, L, 3D). Saves q and k (after QK-norm
// and RoPE), the softmax's row statistics, and qkv's address (v and the raw
// q, k are read from it again by the backward, so qkv must outlive it).
// With c->att non-NULL it also keeps every pair's probabilities there (for
// pictures and tests; the training step does not).
void attention_forward(float *out, AttentionCache *c, const float *qkv,
                       const float *q_gain, const float *k_gain, float qk_eps,
                       const float *cos_t, const float *sin_t, int N, int L, int D, int H) {
    int hd = D / H;
    float scale = 1.0f / sqrtf((float)hd);
    float max_logit = 0.0f;
    c->qkv = qkv;
    // The QueryKeyNorm functions only read the gains (the cast drops a const
    // that the struct, made for the model's trainable gains, does not carry).
    QueryKeyNorm qk_norm = qk_norm_make(hd, qk_eps, (float *)q_gain, (float *)k_gain);
    #pragma omp parallel for collapse(2) schedule(runtime) reduction(max:max_logit) num_threads(work_team(c->work_slots))
    for (int n = 0; n < N; n++) {
        for (int h = 0; h < H; h++) {
            size_t nh = (size_t)n * H + h;     // the (image, head) pair
            size_t off = nh * L * hd;          // its (L, hd) slice of (N, H, L, hd)
            PairWork w = pair_work(c, L, hd);
            float *att = c->att ? c->att + nh * L * L : w.att;   // (L, L)
            // 1. split: q, k, v of this head are columns [h·hd, (h+1)·hd) of
            //    the first, second and third D-wide slices of qkv (N, L, 3D).
            //    v is used where it is; q and k are copied, to be changed.
            const float *row0 = qkv + (size_t)n * L * 3 * D + h * hd;   // q of token 0
            float *q = c->q + off, *k = c->k + off;                     // (L, hd) each
            copy_head_qk(q_gain ? w.q_raw : q, q_gain ? w.k_raw : k, row0, L, D, hd);
            // 2. QK-norm: every (token, head) vector of q and k to RMS 1 · gain.
            //    This head's q, k are one image, one head: (1, 1, L, hd).
            if (q_gain)
                qk_norm_forward(&qk_norm, q, k, c->q_rstd + nh * L, c->k_rstd + nh * L, w.q_raw, w.k_raw, 1, 1, L);
            // 3. RoPE: turn q and k by their token's row/column angles.
            if (cos_t) {
                rope_forward(q, q, cos_t, sin_t, 1, L, hd);
                rope_forward(k, k, cos_t, sin_t, 1, L, hd);
            }
            // 4. scores (L, L) = q · kᵀ / √hd, then softmax over each row.
            matmul_bt(L, L, hd, scale, q, hd, k, hd, 0.0f, att, L, w.t);
            float row_max_abs = softmax_forward(att, c->row_max + nh * L, c->row_inv + nh * L, L);
            if (row_max_abs > max_logit) max_logit = row_max_abs;
            // 5. out (L, hd) of this head = att · v, written straight into
            //    its columns of out (N, L, D): the heads merge as they land.
            matmul(0, 0, L, hd, L, 1.0f, att, L, row0 + 2 * D, 3 * D,
                   0.0f, out + (size_t)n * L * D + h * hd, D);
        }
    }
    c->max_logit = max_logit;
}

// The QK-norm gain gradients of every (image, head) pair, (2, hd) each,
// summed after the parallel loop, in order, so the result is independent of
// the threads.
size_t attention_backward_scratch_floats(int N, int L, int D, int H) {
    return (size_t)N * H * 2 * (size_t)(D / H);
}

static void add_pair_gain_grads(float *dq_gain, float *dk_gain, const float *pair_grads, int pairs, int hd) {
    for (size_t nh = 0; nh < (size_t)pairs; nh++) {
        const float *g = pair_grads + nh * 2 * hd;
        for (int j = 0; j < hd; j++) { dq_gain[j] += g[j]; dk_gain[j] += g[hd + j]; }
    }
}

void attention_backward(float *dqkv, float *dq_gain, float *dk_gain, const float *dout,
                        const AttentionCache *c, float *scratch,
                        const float *q_gain, const float *k_gain,
                        const float *cos_t, const float *sin_t, int N, int L, int D, int H,
                        DinpStart start) {
    int hd = D / H;
    float scale = 1.0f / sqrtf((float)hd);
    size_t Lhd = (size_t)L * hd;
    float beta = start == CLEAR_DINP ? 0.0f : 1.0f;   // 0: each pair writes its columns of dqkv
    QueryKeyNorm qk_norm = qk_norm_make(hd, 0.0f, (float *)q_gain, (float *)k_gain);  // eps: unused backward
    #pragma omp parallel for collapse(2) schedule(runtime) num_threads(work_team(c->work_slots))   // as the forward's
    for (int n = 0; n < N; n++) {
        for (int h = 0; h < H; h++) {
            size_t nh = (size_t)n * H + h;
            size_t off = nh * Lhd;
            PairWork w = pair_work(c, L, hd);
            float *att = w.att;                     // (L, L) the probabilities, computed again
            float *datt = w.datt;                   // (L, L) dL/d(att), then dL/d(scores)
            float *dq = w.dq, *dk = w.dk;           // (L, hd) dL/dq, dL/dk as the scores saw them
            float *dq2 = w.dq2, *dk2 = w.dk2;       // (L, hd) spares: one stage earlier (before RoPE, QK-norm)
            float *dgain = scratch + nh * 2 * hd;   // (2, hd) this pair's share of dq_gain, dk_gain
            const float *q = c->q + off, *k = c->k + off;                    // (L, hd) each
            const float *row0 = c->qkv + (size_t)n * L * 3 * D + h * hd;     // this head's q in token 0's row
            const float *v = row0 + 2 * D;                                   // (L, hd), rows 3D apart
            const float *dy = dout + (size_t)n * L * D + h * hd;             // (L, hd), rows D apart
            float *drow0 = dqkv + (size_t)n * L * 3 * D + h * hd;
            // the forward's probabilities, from q, k and the saved row statistics
            matmul_bt(L, L, hd, scale, q, hd, k, hd, 0.0f, att, L, w.t);
            softmax_rows_with(att, c->row_max + nh * L, c->row_inv + nh * L, L);
            // y = att · v  ->  datt = dy · vᵀ,  dv = attᵀ · dy (into dqkv's v columns)
            matmul_bt(L, L, hd, 1.0f, dy, D, v, 3 * D, 0.0f, datt, L, w.t);
            matmul(1, 0, L, hd, L, 1.0f, att, L, dy, D, beta, drow0 + 2 * D, 3 * D);
            // softmax: datt becomes dL/d(scores), the 1/√hd included
            softmax_backward(datt, att, L, scale);
            // scores = q · kᵀ / √hd  ->  dq = dscore · k,  dk = dscoreᵀ · q (1/√hd in dscore)
            matmul(0, 0, L, hd, L, 1.0f, datt, L, k, hd, 0.0f, dq, hd);
            matmul(1, 0, L, hd, L, 1.0f, datt, L, q, hd, 0.0f, dk, hd);
            // RoPE: rotate the gradients back by −angle
            if (cos_t) {
                memset(dq2, 0, 2 * Lhd * sizeof(float));   // dq2 and dk2, side by side
                rope_backward(dq2, dq, cos_t, sin_t, 1, L, hd);
                rope_backward(dk2, dk, cos_t, sin_t, 1, L, hd);
                float *t = dq; dq = dq2; dq2 = t;
                t = dk; dk = dk2; dk2 = t;
            }
            // QK-norm: back through the RMSNorm to the raw q and k
            if (q_gain) {
                copy_head_qk(w.q_raw, w.k_raw, row0, L, D, hd);   // q and k as the qkv Linear gave them
                memset(dq2, 0, Lhd * sizeof(float));
                memset(dk2, 0, Lhd * sizeof(float));
                memset(dgain, 0, 2 * (size_t)hd * sizeof(float));
                qk_norm_backward(&qk_norm, dq2, dk2, dgain, dgain + hd, dq, dk, w.q_raw, w.k_raw,
                                 c->q_rstd + nh * L, c->k_rstd + nh * L, 1, 1, L);
                dq = dq2; dk = dk2;
            }
            // undo the split: dq and dk into dqkv's q and k columns, added
            // (or written, as the product wrote v's columns with β = 0)
            for (int l = 0; l < L; l++) {
                float *row = drow0 + (size_t)l * 3 * D;
                const float *dq_l = dq + (size_t)l * hd, *dk_l = dk + (size_t)l * hd;   // (hd) each
                for (int j = 0; j < hd; j++) {
                    row[j] = (start == CLEAR_DINP ? 0.0f : row[j]) + dq_l[j];   // 0 + dq, as if cleared
                    row[D + j] = (start == CLEAR_DINP ? 0.0f : row[D + j]) + dk_l[j];
                }
            }
        }
    }
    if (q_gain) add_pair_gain_grads(dq_gain, dk_gain, scratch, N * H, hd);
}
