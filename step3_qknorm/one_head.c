// one_head.c: the one head of sections 1 and 3, the attention layer of
// section 2, and the inputs of section 3's rows (see step3.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "step3.h"
#include "nn/layers.h"

OneHead one_head(Rng *rng) {
    OneHead h = { .L = 64, .hd = 32 };
    size_t n = (size_t)h.L * h.hd;
    h.q = malloc(sizeof(float) * n); h.k = malloc(sizeof(float) * n);
    h.qs = malloc(sizeof(float) * n); h.ks = malloc(sizeof(float) * n);
    h.q_gain = malloc(sizeof(float) * h.hd); h.k_gain = malloc(sizeof(float) * h.hd);
    for (int i = 0; i < h.hd; i++) h.q_gain[i] = h.k_gain[i] = 1.0f;
    h.qkv = calloc(3 * n, sizeof(float));   // v stays 0: only the scores matter here
    h.out = malloc(sizeof(float) * n);
    h.cache_mem = malloc(sizeof(float) * attention_cache_floats(1, h.L, h.hd, 1, 1));
    attention_cache_init(&h.cache, h.cache_mem, 1, h.L, h.hd, 1, 1);
    rng_fill_normal(rng, h.q, (long)n, 1.0f);
    rng_fill_normal(rng, h.k, (long)n, 1.0f);
    return h;
}

void one_head_free(OneHead *h) {
    free(h->q); free(h->k); free(h->qs); free(h->ks); free(h->q_gain); free(h->k_gain);
    free(h->qkv); free(h->out); free(h->cache_mem);
}

// qs, ks = growth · q, k.
void one_head_scale(OneHead *h, float growth) {
    for (int i = 0; i < h->L * h->hd; i++) { h->qs[i] = growth * h->q[i]; h->ks[i] = growth * h->k[i]; }
}

// The head's attention on qs, ks, without or with QK-norm: the largest
// |score| and the mean, over the L queries, of the largest softmax weight
// (1/L for uniform attention, 1 for one-hot). With att (L, L) not NULL,
// also the softmax weights, copied there.
void one_head_scores(OneHead *h, int qk_norm, double *max_abs, double *mean_top, float *att) {
    int L = h->L, hd = h->hd;
    for (int l = 0; l < L; l++) {   // q and k into their columns of qkv
        memcpy(h->qkv + (size_t)l * 3 * hd, h->qs + (size_t)l * hd, sizeof(float) * hd);
        memcpy(h->qkv + (size_t)l * 3 * hd + hd, h->ks + (size_t)l * hd, sizeof(float) * hd);
    }
    attention_forward(h->out, &h->cache, h->qkv, qk_norm ? h->q_gain : NULL,
                      qk_norm ? h->k_gain : NULL, NORM_EPS, NULL, NULL, 1, L, hd, 1);
    double top_sum = 0.0;
    for (int i = 0; i < L; i++) {
        float top = 0.0f;
        for (int j = 0; j < L; j++) top = fmaxf(top, h->cache.att[(size_t)i * L + j]);
        top_sum += top;
    }
    if (att) memcpy(att, h->cache.att, sizeof(float) * L * L);
    *max_abs = h->cache.max_logit;
    *mean_top = top_sum / L;
}

// A whole attention layer without biases (a bias would not grow with the
// weights, so scaling the weights alone would not scale the projections):
// out = proj(attention(qkv(x))).
//   x (N, L, D), w_qkv (3D, D), w_proj (D, D), out (N, L, D).
// q_gain, k_gain (D/H) or NULL for no QK-norm. Returns the largest |logit|.
float attention_layer(float *out, const float *x, const float *w_qkv, const float *w_proj,
                             const float *q_gain, const float *k_gain, int N, int L, int D, int H) {
    float *qkv = malloc(sizeof(float) * N * L * 3 * D);
    float *att_out = malloc(sizeof(float) * N * L * D);
    int qk = q_gain != NULL;
    float *mem = malloc(sizeof(float) * attention_cache_floats(N, L, D, H, qk));
    AttentionCache cache;
    attention_cache_init(&cache, mem, N, L, D, H, qk);
    linear_forward(qkv, x, w_qkv, NULL, N * L, D, 3 * D);
    attention_forward(att_out, &cache, qkv, q_gain, k_gain, NORM_EPS, NULL, NULL, N, L, D, H);
    linear_forward(out, att_out, w_proj, NULL, N * L, D, D);
    float max_logit = cache.max_logit;
    free(qkv); free(att_out); free(mem);
    return max_logit;
}

const float BOUND_SCALES[4] = { 1e-3f, 1.0f, 1e3f, 1e6f };

// Draws the head's qs, ks as row `row` of the table says (rows 0-3 one scale
// each, row 4 mixed scales, row 5 keys equal to their queries).
void draw_row_inputs(OneHead *h, Rng *rng, int row) {
    float *qs = h->qs, *ks = h->ks;
    rng_fill_normal(rng, qs, h->L * h->hd, 1.0f);
    rng_fill_normal(rng, ks, h->L * h->hd, 1.0f);
    for (int i = 0; i < h->L * h->hd; i++) {
        if (row < 4) { qs[i] *= BOUND_SCALES[row]; ks[i] *= BOUND_SCALES[row]; }
        else if (row == 4) {
            qs[i] *= powf(10.0f, rng_uniform_range(rng, -BOUND_SPREAD, BOUND_SPREAD));
            ks[i] *= powf(10.0f, rng_uniform_range(rng, -BOUND_SPREAD, BOUND_SPREAD));
        } else { qs[i] *= BOUND_PARALLEL; ks[i] = qs[i]; }   // the worst case
    }
}

