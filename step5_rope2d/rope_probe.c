// rope_probe.c: see rope_probe.h.
#include "rope_probe.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include "nn/layers.h"
#include "nn/rng.h"
#include "step5.h"

double table_angle(const float *cos_t, const float *sin_t, int hd, int tok, int i) {
    return atan2(sin_t[(size_t)tok * hd + 2 * i], cos_t[(size_t)tok * hd + 2 * i]);
}

// To rotate one vector as token l, hand rope_forward row l of the tables and L = 1.
double rope_score(const float *q, const float *k, const float *cos_t, const float *sin_t,
                  int grid, int hd, int rq, int cq, int rk, int ck) {
    float qr[hd], kr[hd];
    int iq = rq * grid + cq, ik = rk * grid + ck;   // tokens are row-major over the grid
    rope_forward(qr, q, cos_t + (size_t)iq * hd, sin_t + (size_t)iq * hd, 1, 1, hd);
    rope_forward(kr, k, cos_t + (size_t)ik * hd, sin_t + (size_t)ik * hd, 1, 1, hd);
    double s = 0.0;
    for (int j = 0; j < hd; j++) s += (double)qr[j] * kr[j];
    return s;
}

double rope_norm2(const float *x, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += (double)x[i] * x[i];
    return sqrt(s);
}

// ---------------------------------------------------------------------------
// What main.c's sections share (step5.h).
// The model's own sizes: 32×32 images in 4×4 patches make an 8×8 grid of
// L = 64 tokens; D = 128 over 4 heads gives head_dim 32.
void step5_init(Step5 *s, int seed) {
    s->cfg = model_config_default();
    s->grid = cfg_grid(&s->cfg); s->L = cfg_tokens(&s->cfg); s->hd = cfg_head_dim(&s->cfg);
    s->quarter = s->hd / 4;
    s->base = s->cfg.rope_base;
    s->cos_t = malloc(sizeof(float) * s->L * s->hd);
    s->sin_t = malloc(sizeof(float) * s->L * s->hd);
    rope2d_tables(s->cos_t, s->sin_t, s->grid, s->hd, s->base, 0);
    s->seed = seed;
    s->q = malloc(sizeof(float) * s->hd);
    s->k = malloc(sizeof(float) * s->hd);
    Rng rng;
    rng_seed(&rng, (unsigned long long)seed);
    rng_fill_normal(&rng, s->q, s->hd, 1.0f);
    rng_fill_normal(&rng, s->k, s->hd, 1.0f);
    s->tok_row = 1; s->tok_col = 2;
}

void step5_free(Step5 *s) {
    free(s->cos_t); free(s->sin_t); free(s->q); free(s->k);
}
