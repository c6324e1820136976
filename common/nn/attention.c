// attention.c: the QueryKeyNorm module, and multi-head self-attention with
// QK-norm and 2D RoPE inside: everything between the qkv Linear and the proj
// Linear. The attention normalises q and k through qk_norm_forward and
// qk_norm_backward, the same functions step 3 teaches and tests on their own.
//
// Work is split over (image, head) pairs: each pair's L×L scores fit in
// cache, and the pairs are independent, so one OpenMP loop covers them,
// handing the pairs out by schedule(runtime) as linear.c does its blocks
// (why: there). The small matrix products inside call cblas_sgemm from inside
// that loop; the OpenMP build of OpenBLAS then runs them on the calling thread.
#include <math.h>
#include <string.h>
#include "fastmath.h"
#include "layers.h"
#include "matmul.h"

// ---------------------------------------------------------------------------
// QueryKeyNorm: RMSNorm over head_dim for q and for k, one gain each, shared
// by all heads. q, k (N, heads, L, hd) are just (N·heads·L) rows of hd.
QueryKeyNorm qk_norm_make(int head_dim, float eps, float *q_gain, float *k_gain) {
    QueryKeyNorm m = { head_dim, eps, q_gain, k_gain };
    return m;
}

void qk_norm_forward(const QueryKeyNorm *m, float *q_out, float *k_out,
                     float *q_rstd, float *k_rstd, const float *q, const float *k,
                     int N, int heads, int L) {
    int rows = N * heads * L;
    rmsnorm_forward(q_out, q_rstd, q, m->q_gain, rows, m->head_dim, m->eps);
    rmsnorm_forward(k_out, k_rstd, k, m->k_gain, rows, m->head_dim, m->eps);
}

void qk_norm_backward(const QueryKeyNorm *m, float *dq, float *dk, float *dq_gain, float *dk_gain,
                      const float *dq_out, const float *dk_out, const float *q, const float *k,
                      const float *q_rstd, const float *k_rstd, int N, int heads, int L) {
    // EXERCISE(qk_norm_backward) begin
    int rows = N * heads * L;   // dq, dk, dq_out, dk_out (rows, hd); dq_gain, dk_gain (hd)
    rmsnorm_backward(dq, dq_gain, dq_out, q, q_rstd, m->q_gain, rows, m->head_dim);
    rmsnorm_backward(dk, dk_gain, dk_out, k, k_rstd, m->k_gain, rows, m->head_dim);
    // EXERCISE end
}

// ---------------------------------------------------------------------------
size_t attention_cache_floats(int N, int L, int D, int H, int qk_norm) {
    size_t per = (size_t)N * L * D;            // one (N, H, L, hd) tensor
    size_t n = 4 * per + (size_t)N * H * L * L; // q, k, v, y, att
    if (qk_norm) n += 2 * per + 2 * (size_t)N * H * L;
    return n;
}

void attention_cache_init(AttentionCache *c, float *mem, int N, int L, int D, int H, int qk_norm) {
    size_t per = (size_t)N * L * D;
    memset(c, 0, sizeof *c);
    c->q = mem; mem += per;
    c->k = mem; mem += per;
    c->v = mem; mem += per;
    c->y = mem; mem += per;
    c->att = mem; mem += (size_t)N * H * L * L;
    if (qk_norm) {
        c->q_raw = mem; mem += per;
        c->k_raw = mem; mem += per;
        c->q_rstd = mem; mem += (size_t)N * H * L;
        c->k_rstd = mem;
    }
}

void attention_forward(float *out, AttentionCache *c, const float *qkv,
                       const float *q_gain, const float *k_gain, float qk_eps,
                       const float *cos_t, const float *sin_t, int N, int L, int D, int H) {
    int hd = D / H;
    float scale = 1.0f / sqrtf((float)hd);
    float max_logit = 0.0f;
    // The QueryKeyNorm functions only read the gains (the cast drops a const
    // that the struct, made for the model's trainable gains, does not carry).
    QueryKeyNorm qk_norm = qk_norm_make(hd, qk_eps, (float *)q_gain, (float *)k_gain);
    #pragma omp parallel for collapse(2) schedule(runtime) reduction(max:max_logit)
    for (int n = 0; n < N; n++) {
        for (int h = 0; h < H; h++) {
            size_t nh = (size_t)n * H + h;     // the (image, head) pair
            size_t off = nh * L * hd;          // its (L, hd) slice of (N, H, L, hd)
            // 1. split: q, k, v of this head are columns [h·hd, (h+1)·hd) of
            //    the first, second and third D-wide slices of qkv (N, L, 3D).
            float *q = (q_gain ? c->q_raw : c->q) + off;   // (L, hd)
            float *k = (q_gain ? c->k_raw : c->k) + off;   // (L, hd)
            float *v = c->v + off;                         // (L, hd)
            for (int l = 0; l < L; l++) {
                const float *row = qkv + ((size_t)n * L + l) * 3 * D + h * hd;
                memcpy(q + (size_t)l * hd, row, hd * sizeof(float));
                memcpy(k + (size_t)l * hd, row + D, hd * sizeof(float));
                memcpy(v + (size_t)l * hd, row + 2 * D, hd * sizeof(float));
            }
            // 2. QK-norm: every (token, head) vector of q and k to RMS 1 · gain.
            //    This head's q, k are one image, one head: (1, 1, L, hd).
            if (q_gain) {
                qk_norm_forward(&qk_norm, c->q + off, c->k + off, c->q_rstd + nh * L,
                                c->k_rstd + nh * L, q, k, 1, 1, L);
                q = c->q + off; k = c->k + off;         // (L, hd) each
            }
            // 3. RoPE: turn q and k by their token's row/column angles.
            if (cos_t) {
                rope_forward(q, q, cos_t, sin_t, 1, L, hd);
                rope_forward(k, k, cos_t, sin_t, 1, L, hd);
            }
            // 4. scores (L, L) = q · kᵀ / √hd, then softmax over each row.
            float *att = c->att + nh * L * L;
            matmul(0, 1, L, L, hd,
                        scale, q, hd, k, hd, 0.0f, att, L);
            float row_max_abs = 0.0f;
            for (int i = 0; i < L; i++) {
                float *row = att + (size_t)i * L;   // (L) query i's scores
                float mx = -INFINITY, mn = INFINITY;
                for (int j = 0; j < L; j++) {
                    mx = row[j] > mx ? row[j] : mx;
                    mn = row[j] < mn ? row[j] : mn;
                }
                // the largest |logit|, for the scorecard (QK-norm's reason to exist)
                float big = fabsf(mx) > fabsf(mn) ? fabsf(mx) : fabsf(mn);
                if (big > row_max_abs) row_max_abs = big;
                float sum = 0.0f;   // subtract the max first: exp never overflows
                for (int j = 0; j < L; j++) { row[j] = exp_fast(row[j] - mx); sum += row[j]; }
                float inv = 1.0f / sum;
                for (int j = 0; j < L; j++) row[j] *= inv;
            }
            if (row_max_abs > max_logit) max_logit = row_max_abs;
            // 5. y (L, hd) = att · v, then merge heads into out (N, L, D).
            float *y = c->y + off;                 // (L, hd)
            matmul(0, 0, L, hd, L,
                        1.0f, att, L, v, hd, 0.0f, y, hd);
            for (int l = 0; l < L; l++)
                memcpy(out + ((size_t)n * L + l) * D + h * hd, y + (size_t)l * hd, hd * sizeof(float));
        }
    }
    c->max_logit = max_logit;
}

// Per (image, head): dy, dq, dk, dv, two spare (L, hd) buffers, the (L, L)
// score gradient, and the QK-norm gain gradients of that pair (summed after
// the parallel loop, in order, so the result is independent of threads).
size_t attention_backward_scratch_floats(int N, int L, int D, int H) {
    int hd = D / H;
    return (size_t)N * H * ((size_t)L * L + 6 * (size_t)L * hd + 2 * (size_t)hd);
}

// The QK-norm gains are shared by all heads: their gradient is the sum of
// every (image, head) pair's share, dgq and dgk (hd) each at the end of the
// pair's scratch, added in pair order on one thread.
static void add_pair_gain_grads(float *dq_gain, float *dk_gain, const float *scratch,
                                int pairs, int L, int hd) {
    size_t per_pair = (size_t)L * L + 6 * (size_t)L * hd + 2 * (size_t)hd;
    for (size_t nh = 0; nh < (size_t)pairs; nh++) {
        const float *g = scratch + nh * per_pair + (size_t)L * L + 6 * (size_t)L * hd;
        for (int j = 0; j < hd; j++) { dq_gain[j] += g[j]; dk_gain[j] += g[hd + j]; }
    }
}

void attention_backward(float *dqkv, float *dq_gain, float *dk_gain, const float *dout,
                        const AttentionCache *c, float *scratch,
                        const float *q_gain, const float *k_gain,
                        const float *cos_t, const float *sin_t, int N, int L, int D, int H) {
    int hd = D / H;
    float scale = 1.0f / sqrtf((float)hd);
    size_t per_pair = (size_t)L * L + 6 * (size_t)L * hd + 2 * (size_t)hd;
    QueryKeyNorm qk_norm = qk_norm_make(hd, 0.0f, (float *)q_gain, (float *)k_gain);  // eps: unused backward
    #pragma omp parallel for collapse(2) schedule(runtime)   // as the forward's: any schedule, same numbers
    for (int n = 0; n < N; n++) {
        for (int h = 0; h < H; h++) {
            size_t nh = (size_t)n * H + h;
            size_t off = nh * L * hd;
            float *s = scratch + nh * per_pair;
            float *datt = s; s += (size_t)L * L;    // (L, L) dL/d(att), then dL/d(scores)
            float *dy = s; s += (size_t)L * hd;     // (L, hd) this head's slice of dout
            float *dq = s; s += (size_t)L * hd;     // (L, hd) dL/dq as the scores saw it
            float *dk = s; s += (size_t)L * hd;     // (L, hd)
            float *dv = s; s += (size_t)L * hd;     // (L, hd)
            float *dq2 = s; s += (size_t)L * hd;    // (L, hd) spare: dq one stage earlier
            float *dk2 = s; s += (size_t)L * hd;    // (L, hd)   (before RoPE, before QK-norm)
            float *dgq = s; s += hd;                // (hd) this pair's share of dq_gain
            float *dgk = s;                         // (hd) and of dk_gain
            const float *q = c->q + off, *k = c->k + off, *v = c->v + off;   // (L, hd) each
            const float *att = c->att + nh * L * L;                            // (L, L)
            // undo the merge: this head's slice of dout
            for (int l = 0; l < L; l++)
                memcpy(dy + (size_t)l * hd, dout + ((size_t)n * L + l) * D + h * hd, hd * sizeof(float));
            // y = att · v  ->  datt = dy · vᵀ,  dv = attᵀ · dy
            matmul(0, 1, L, L, hd,
                        1.0f, dy, hd, v, hd, 0.0f, datt, L);
            matmul(1, 0, L, hd, L,
                        1.0f, att, L, dy, hd, 0.0f, dv, hd);
            // softmax: dscore_ij = att_ij · (datt_ij − Σ_k att_ik·datt_ik); then the 1/√hd
            for (int i = 0; i < L; i++) {
                float *dr = datt + (size_t)i * L;
                const float *ar = att + (size_t)i * L;
                float dot = 0.0f;
                for (int j = 0; j < L; j++) dot += ar[j] * dr[j];
                for (int j = 0; j < L; j++) dr[j] = ar[j] * (dr[j] - dot) * scale;
            }
            // scores = q · kᵀ  ->  dq = dscore · k,  dk = dscoreᵀ · q
            matmul(0, 0, L, hd, L,
                        1.0f, datt, L, k, hd, 0.0f, dq, hd);
            matmul(1, 0, L, hd, L,
                        1.0f, datt, L, q, hd, 0.0f, dk, hd);
            // RoPE: rotate the gradients back by −angle
            if (cos_t) {
                memset(dq2, 0, (size_t)L * hd * sizeof(float));
                memset(dk2, 0, (size_t)L * hd * sizeof(float));
                rope_backward(dq2, dq, cos_t, sin_t, 1, L, hd);
                rope_backward(dk2, dk, cos_t, sin_t, 1, L, hd);
                float *t = dq; dq = dq2; dq2 = t;
                t = dk; dk = dk2; dk2 = t;
            }
            // QK-norm: back through the RMSNorm to the raw q and k
            if (q_gain) {
                memset(dq2, 0, (size_t)L * hd * sizeof(float));
                memset(dk2, 0, (size_t)L * hd * sizeof(float));
                memset(dgq, 0, 2 * (size_t)hd * sizeof(float));
                qk_norm_backward(&qk_norm, dq2, dk2, dgq, dgk, dq, dk, c->q_raw + off, c->k_raw + off,
                                 c->q_rstd + nh * L, c->k_rstd + nh * L, 1, 1, L);
                dq = dq2; dk = dk2;
            }
            // undo the split: accumulate into dqkv (N, L, 3D)
            for (int l = 0; l < L; l++) {
                float *row = dqkv + ((size_t)n * L + l) * 3 * D + h * hd;
                for (int j = 0; j < hd; j++) {
                    row[j] += dq[(size_t)l * hd + j];
                    row[D + j] += dk[(size_t)l * hd + j];
                    row[2 * D + j] += dv[(size_t)l * hd + j];
                }
            }
        }
    }
    if (q_gain) add_pair_gain_grads(dq_gain, dk_gain, scratch, N * H, L, hd);
}
