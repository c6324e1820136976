// model.c: TinyDiT. The parameter table (names as in PyTorch's state_dict),
// the initialisation, the activations of one pass, and the forward and
// backward passes of the whole model (spec §3, §4).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "rng.h"

#define NORM_EPS 1e-6f

// ---------------------------------------------------------------------------
// The parameter table. Tensors are appended in the order PyTorch's
// named_parameters() lists them, each a slice of one flat array.
static void add_tensor(Model *m, const char *name, int ndim, int d0, int d1) {
    ParamTensor *t = &m->tensors[m->n_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = ndim;
    t->shape[0] = d0;
    t->shape[1] = ndim == 2 ? d1 : 1;
    t->offset = m->n_params;
    t->size = (size_t)d0 * (ndim == 2 ? d1 : 1);
    m->n_params += t->size;
}

static void add_linear(Model *m, const char *prefix, int in, int out) {
    char name[PARAM_NAME_LEN];
    snprintf(name, sizeof name, "%s.weight", prefix);
    add_tensor(m, name, 2, out, in);
    if (m->cfg.bias) {
        snprintf(name, sizeof name, "%s.bias", prefix);
        add_tensor(m, name, 1, out, 0);
    }
}

static void build_table(Model *m) {
    const Config *c = &m->cfg;
    int D = c->dim, g = cfg_grid(c), hd = cfg_head_dim(c), hid = cfg_mlp_hidden(c);
    char p[PARAM_NAME_LEN];
    m->n_tensors = 0;
    m->n_params = 0;
    if (c->pos == POS_LEARNED) {
        add_tensor(m, "pos_row", 2, g, D);
        add_tensor(m, "pos_col", 2, g, D);
    }
    add_linear(m, "patch_embed", cfg_patch_dim(c), D);
    add_linear(m, "t_fc1", c->freq_dim, D);
    add_linear(m, "t_fc2", D, D);
    for (int b = 0; b < c->depth; b++) {
        snprintf(p, sizeof p, "blocks.%d.attn.qkv", b);    add_linear(m, p, D, 3 * D);
        snprintf(p, sizeof p, "blocks.%d.attn.proj", b);   add_linear(m, p, D, D);
        if (c->qk_norm) {
            snprintf(p, sizeof p, "blocks.%d.attn.q_norm.weight", b); add_tensor(m, p, 1, hd, 0);
            snprintf(p, sizeof p, "blocks.%d.attn.k_norm.weight", b); add_tensor(m, p, 1, hd, 0);
        }
        if (c->mlp == MLP_SWIGLU) {
            snprintf(p, sizeof p, "blocks.%d.mlp.w1", b); add_linear(m, p, D, hid);
            snprintf(p, sizeof p, "blocks.%d.mlp.w2", b); add_linear(m, p, D, hid);
            snprintf(p, sizeof p, "blocks.%d.mlp.w3", b); add_linear(m, p, hid, D);
        } else {
            snprintf(p, sizeof p, "blocks.%d.mlp.fc1", b); add_linear(m, p, D, hid);
            snprintf(p, sizeof p, "blocks.%d.mlp.fc2", b); add_linear(m, p, hid, D);
        }
        snprintf(p, sizeof p, "blocks.%d.ada", b); add_linear(m, p, D, 4 * D);
    }
    add_linear(m, "ada_f", D, 2 * D);
    add_linear(m, "head", D, cfg_patch_dim(c));
}

const ParamTensor *model_find(const Model *m, const char *name) {
    for (int i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0) return &m->tensors[i];
    return NULL;
}

static float *lookup(const Model *m, float *base, const char *name) {
    const ParamTensor *t = model_find(m, name);
    return t ? base + t->offset : NULL;
}

// Fills the named views (p.qkv_w, g.qkv_w, ...) for one flat array.
static void make_views(const Model *m, float *base, ParamViews *v) {
    char p[PARAM_NAME_LEN];
    v->pos_row = lookup(m, base, "pos_row");
    v->pos_col = lookup(m, base, "pos_col");
    v->patch_w = lookup(m, base, "patch_embed.weight"); v->patch_b = lookup(m, base, "patch_embed.bias");
    v->t_fc1_w = lookup(m, base, "t_fc1.weight");       v->t_fc1_b = lookup(m, base, "t_fc1.bias");
    v->t_fc2_w = lookup(m, base, "t_fc2.weight");       v->t_fc2_b = lookup(m, base, "t_fc2.bias");
    v->ada_f_w = lookup(m, base, "ada_f.weight");       v->ada_f_b = lookup(m, base, "ada_f.bias");
    v->head_w = lookup(m, base, "head.weight");         v->head_b = lookup(m, base, "head.bias");
    for (int b = 0; b < m->cfg.depth; b++) {
        BlockParams *bp = &v->blocks[b];
#define VIEW(field, fmt) (snprintf(p, sizeof p, fmt, b), bp->field = lookup(m, base, p))
        VIEW(qkv_w, "blocks.%d.attn.qkv.weight");   VIEW(qkv_b, "blocks.%d.attn.qkv.bias");
        VIEW(proj_w, "blocks.%d.attn.proj.weight"); VIEW(proj_b, "blocks.%d.attn.proj.bias");
        VIEW(q_norm, "blocks.%d.attn.q_norm.weight"); VIEW(k_norm, "blocks.%d.attn.k_norm.weight");
        VIEW(fc1_w, "blocks.%d.mlp.fc1.weight"); VIEW(fc1_b, "blocks.%d.mlp.fc1.bias");
        VIEW(fc2_w, "blocks.%d.mlp.fc2.weight"); VIEW(fc2_b, "blocks.%d.mlp.fc2.bias");
        VIEW(w1_w, "blocks.%d.mlp.w1.weight"); VIEW(w1_b, "blocks.%d.mlp.w1.bias");
        VIEW(w2_w, "blocks.%d.mlp.w2.weight"); VIEW(w2_b, "blocks.%d.mlp.w2.bias");
        VIEW(w3_w, "blocks.%d.mlp.w3.weight"); VIEW(w3_b, "blocks.%d.mlp.w3.bias");
        VIEW(ada_w, "blocks.%d.ada.weight");  VIEW(ada_b, "blocks.%d.ada.bias");
#undef VIEW
    }
}

size_t model_count_params(const Config *cfg) {
    Model m;
    memset(&m, 0, sizeof m);
    m.cfg = *cfg;
    build_table(&m);
    return m.n_params;
}

int model_build(Model *m, const Config *cfg, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    if (config_check_model(cfg, err, errlen) != 0) return -1;
    if (4 * (size_t)cfg->depth * 8 + 16 > MAX_PARAM_TENSORS) {
        snprintf(err, errlen, "depth %d is too deep for this build (MAX_PARAM_TENSORS)", cfg->depth);
        return -1;
    }
    m->cfg = *cfg;
    build_table(m);
    m->params = calloc(m->n_params, sizeof(float));
    m->grads = calloc(m->n_params, sizeof(float));
    m->p.blocks = calloc(cfg->depth, sizeof(BlockParams));
    m->g.blocks = calloc(cfg->depth, sizeof(BlockParams));
    if (!m->params || !m->grads || !m->p.blocks || !m->g.blocks) {
        snprintf(err, errlen, "out of memory for %zu parameters", m->n_params);
        model_free(m);
        return -1;
    }
    make_views(m, m->params, &m->p);
    make_views(m, m->grads, &m->g);
    // Norm gains start at 1 (the identity), everything else is drawn later.
    for (int i = 0; i < m->n_tensors; i++)
        if (strstr(m->tensors[i].name, "norm"))
            for (size_t j = 0; j < m->tensors[i].size; j++) m->params[m->tensors[i].offset + j] = 1.0f;
    if (cfg->pos == POS_ROPE2D) {
        int L = cfg_tokens(cfg), hd = cfg_head_dim(cfg);
        m->rope_cos = malloc(sizeof(float) * L * hd);
        m->rope_sin = malloc(sizeof(float) * L * hd);
        rope2d_tables(m->rope_cos, m->rope_sin, cfg_grid(cfg), hd, cfg->rope_base, 0);
    }
    return 0;
}

void model_free(Model *m) {
    free(m->params); free(m->grads);
    free(m->p.blocks); free(m->g.blocks);
    free(m->rope_cos); free(m->rope_sin);
    memset(m, 0, sizeof *m);
}

// Spec §4: Linear weights and biases uniform in ±1/√fan_in (PyTorch's
// default), position tables N(0, 0.02²), norm gains 1. Drawn tensor by
// tensor in table order from one stream.
void model_init_weights(Model *m, unsigned long long seed) {
    Rng r;
    rng_seed(&r, seed);
    for (int i = 0; i < m->n_tensors; i++) {
        const ParamTensor *t = &m->tensors[i];
        float *w = m->params + t->offset;
        if (strstr(t->name, "norm")) {
            for (size_t j = 0; j < t->size; j++) w[j] = 1.0f;
        } else if (strncmp(t->name, "pos_", 4) == 0) {
            rng_fill_normal(&r, w, (long)t->size, 0.02f);
        } else {
            // a weight (out, in) has fan_in = in; its bias shares the fan_in of
            // the weight just before it in the table.
            int fan_in = t->ndim == 2 ? t->shape[1] : m->tensors[i - 1].shape[1];
            float bound = 1.0f / sqrtf((float)fan_in);
            rng_fill_uniform(&r, w, (long)t->size, -bound, bound);
        }
    }
}

// ---------------------------------------------------------------------------
// Activations: one allocation, carved into named pieces.
typedef struct { float *base; size_t used; } Arena;
static float *take(Arena *a, size_t n) {
    float *p = a->base ? a->base + a->used : NULL;
    a->used += n;
    return p;
}

static void carve_activations(Activations *a, const Model *m, Arena *ar) {
    const Config *c = &m->cfg;
    size_t N = a->N, L = cfg_tokens(c), D = c->dim, P = cfg_patch_dim(c), F = c->freq_dim;
    size_t H = cfg_mlp_hidden(c), NL = N * L, S = c->img;
    int swiglu = c->mlp == MLP_SWIGLU, qk = c->qk_norm;
    a->tokens = take(ar, NL * P);
    a->temb = take(ar, N * F);
    a->t_h = take(ar, N * D); a->t_hs = take(ar, N * D);
    a->c = take(ar, N * D);   a->c_silu = take(ar, N * D);
    a->resid = take(ar, (2 * (size_t)c->depth + 1) * NL * D);
    for (int b = 0; b < c->depth; b++) {
        a->ada[b] = take(ar, N * 4 * D);
        a->n1[b] = take(ar, NL * D); a->n2[b] = take(ar, NL * D);
        a->st1a[b] = take(ar, NL); a->st1b[b] = take(ar, NL);
        a->st2a[b] = take(ar, NL); a->st2b[b] = take(ar, NL);
        a->m1[b] = take(ar, NL * D); a->m2[b] = take(ar, NL * D);
        a->qkv[b] = take(ar, NL * 3 * D);
        float *cache = take(ar, attention_cache_floats(N, L, D, c->heads, qk));
        if (cache) attention_cache_init(&a->att[b], cache, N, L, D, c->heads, qk);
        a->att_out[b] = take(ar, NL * D);
        a->h_pre[b] = take(ar, NL * H);
        a->h_val[b] = swiglu ? take(ar, NL * H) : NULL;
        a->h_act[b] = take(ar, NL * H);
    }
    a->ada_f = take(ar, N * 2 * D);
    a->nf = take(ar, NL * D); a->stfa = take(ar, NL); a->stfb = take(ar, NL);
    a->mf = take(ar, NL * D);
    a->out_tokens = take(ar, NL * P);
    a->v = take(ar, N * c->channels * S * S);
    a->max_logit = take(ar, c->depth);
}

int activations_alloc(Activations *a, const Model *m, int N) {
    memset(a, 0, sizeof *a);
    a->N = N;
    int depth = m->cfg.depth;
    float ***lists[] = { &a->ada, &a->n1, &a->n2, &a->st1a, &a->st1b, &a->st2a, &a->st2b,
                         &a->m1, &a->m2, &a->qkv, &a->att_out, &a->h_pre, &a->h_val, &a->h_act };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        *lists[i] = calloc(depth, sizeof(float *));
        if (!*lists[i]) return -1;
    }
    a->att = calloc(depth, sizeof(AttentionCache));
    if (!a->att) return -1;
    Arena ar = { NULL, 0 };
    carve_activations(a, m, &ar);          // first pass: count
    a->floats = ar.used;
    a->mem = calloc(a->floats, sizeof(float));
    if (!a->mem) return -1;
    ar.base = a->mem; ar.used = 0;
    carve_activations(a, m, &ar);          // second pass: hand out
    return 0;
}

void activations_free(Activations *a) {
    free(a->mem);
    free(a->ada); free(a->n1); free(a->n2); free(a->st1a); free(a->st1b); free(a->st2a);
    free(a->st2b); free(a->m1); free(a->m2); free(a->qkv); free(a->att_out);
    free(a->h_pre); free(a->h_val); free(a->h_act); free(a->att);
    memset(a, 0, sizeof *a);
}

// ---------------------------------------------------------------------------
// The block norm, LayerNorm or RMSNorm by the config. stat_a holds the mean
// (LayerNorm only), stat_b the reciprocal spread.
static void norm_forward(const Config *c, float *out, float *stat_a, float *stat_b,
                         const float *inp, int R) {
    if (c->norm == NORM_RMSNORM) rmsnorm_forward(out, stat_b, inp, NULL, R, c->dim, NORM_EPS);
    else layernorm_forward(out, stat_a, stat_b, inp, R, c->dim, NORM_EPS);
}

static void norm_backward(const Config *c, float *dinp, const float *dout, const float *inp,
                          const float *stat_a, const float *stat_b, int R) {
    if (c->norm == NORM_RMSNORM) rmsnorm_backward(dinp, NULL, dout, inp, stat_b, NULL, R, c->dim);
    else layernorm_backward(dinp, dout, inp, stat_a, stat_b, R, c->dim);
}

static void add_inplace(float *y, const float *x, size_t n) {
    #pragma omp parallel for schedule(static) if (n > 32768)
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

void model_forward(Model *m, Activations *a, const float *x, const float *t) {
    const Config *c = &m->cfg;
    const ParamViews *p = &m->p;
    int N = a->N, C = c->channels, S = c->img, pt = c->patch, g = cfg_grid(c);
    int L = cfg_tokens(c), D = c->dim, P = cfg_patch_dim(c), F = c->freq_dim;
    int H = cfg_mlp_hidden(c), NL = N * L;
    size_t NLD = (size_t)NL * D;
    const float *cos_t = m->rope_cos, *sin_t = m->rope_sin;

    // tokens: patches of the noisy image, embedded, plus their position
    patchify(a->tokens, x, N, C, S, pt);                          // (N, L, P)
    float *h = a->resid;                                          // (N, L, D)
    linear_forward(h, a->tokens, p->patch_w, p->patch_b, NL, P, D);
    if (c->pos == POS_LEARNED) pos_add_forward(h, p->pos_row, p->pos_col, N, g, D);

    // the condition c: the time, as waves, through a two-layer MLP
    timestep_embedding(a->temb, t, N, F);                         // (N, F)
    linear_forward(a->t_h, a->temb, p->t_fc1_w, p->t_fc1_b, N, F, D);
    silu_forward(a->t_hs, a->t_h, (size_t)N * D);
    linear_forward(a->c, a->t_hs, p->t_fc2_w, p->t_fc2_b, N, D, D); // (N, D)
    silu_forward(a->c_silu, a->c, (size_t)N * D);

    for (int b = 0; b < c->depth; b++) {
        const BlockParams *bp = &p->blocks[b];
        float *x_in = a->resid + (2 * (size_t)b) * NLD;   // block input
        float *x_mid = x_in + NLD;                          // after attention
        float *x_out = x_mid + NLD;                         // after the MLP
        float *ada = a->ada[b];                             // (N, 4D)
        linear_forward(ada, a->c_silu, bp->ada_w, bp->ada_b, N, D, 4 * D);
        // attention half: x_mid = x_in + attn(norm(x_in)·(1 + scale_a) + shift_a)
        norm_forward(c, a->n1[b], a->st1a[b], a->st1b[b], x_in, NL);
        modulate_forward(a->m1[b], a->n1[b], ada, ada + D, N, L, D, 4 * D);
        linear_forward(a->qkv[b], a->m1[b], bp->qkv_w, bp->qkv_b, NL, D, 3 * D);
        attention_forward(a->att_out[b], &a->att[b], a->qkv[b], bp->q_norm, bp->k_norm, NORM_EPS,
                          cos_t, sin_t, N, L, D, c->heads);
        a->max_logit[b] = a->att[b].max_logit;
        linear_forward(x_mid, a->att_out[b], bp->proj_w, bp->proj_b, NL, D, D);
        add_inplace(x_mid, x_in, NLD);
        // MLP half: x_out = x_mid + mlp(norm(x_mid)·(1 + scale_m) + shift_m)
        norm_forward(c, a->n2[b], a->st2a[b], a->st2b[b], x_mid, NL);
        modulate_forward(a->m2[b], a->n2[b], ada + 2 * D, ada + 3 * D, N, L, D, 4 * D);
        if (c->mlp == MLP_SWIGLU) {
            linear_forward(a->h_pre[b], a->m2[b], bp->w1_w, bp->w1_b, NL, D, H);   // gate
            linear_forward(a->h_val[b], a->m2[b], bp->w2_w, bp->w2_b, NL, D, H);   // value
            swiglu_forward(a->h_act[b], a->h_pre[b], a->h_val[b], (size_t)NL * H);
            linear_forward(x_out, a->h_act[b], bp->w3_w, bp->w3_b, NL, H, D);
        } else {
            linear_forward(a->h_pre[b], a->m2[b], bp->fc1_w, bp->fc1_b, NL, D, H);
            gelu_forward(a->h_act[b], a->h_pre[b], (size_t)NL * H);
            linear_forward(x_out, a->h_act[b], bp->fc2_w, bp->fc2_b, NL, H, D);
        }
        add_inplace(x_out, x_mid, NLD);
    }

    // final layer: norm, modulate with its own shift and scale, project to patches
    float *x_last = a->resid + 2 * (size_t)c->depth * NLD;
    linear_forward(a->ada_f, a->c_silu, p->ada_f_w, p->ada_f_b, N, D, 2 * D);
    norm_forward(c, a->nf, a->stfa, a->stfb, x_last, NL);
    modulate_forward(a->mf, a->nf, a->ada_f, a->ada_f + D, N, L, D, 2 * D);
    linear_forward(a->out_tokens, a->mf, p->head_w, p->head_b, NL, D, P);
    unpatchify(a->v, a->out_tokens, N, C, S, pt);                 // (N, C, S, S)
}

// ---------------------------------------------------------------------------
int backward_scratch_alloc(BackwardScratch *s, const Model *m, int N) {
    const Config *c = &m->cfg;
    size_t L = cfg_tokens(c), D = c->dim, P = cfg_patch_dim(c), H = cfg_mlp_hidden(c);
    size_t NL = (size_t)N * L, big = NL * (H > 3 * D ? H : 3 * D);
    size_t att = attention_backward_scratch_floats(N, L, D, c->heads);
    memset(s, 0, sizeof *s);
    s->floats = 3 * NL * D + 3 * big + (size_t)N * 4 * D + 4 * (size_t)N * D + NL * P + att;
    s->mem = calloc(s->floats, sizeof(float));
    if (!s->mem) return -1;
    float *q = s->mem;
    s->dresid = q; q += NL * D;
    s->dtmp = q;   q += NL * D;
    s->dtmp2 = q;  q += NL * D;
    s->dbig = q;   q += big;
    s->dbig2 = q;  q += big;
    s->dbig3 = q;  q += big;
    s->dada = q;   q += (size_t)N * 4 * D;
    s->dc_silu = q; q += (size_t)N * D;
    s->dc = q;     q += (size_t)N * D;
    s->dt_hs = q;  q += (size_t)N * D;
    s->dt_h = q;   q += (size_t)N * D;
    s->dtokens = q; q += NL * P;
    s->att_scratch = q;
    return 0;
}

void backward_scratch_free(BackwardScratch *s) {
    free(s->mem);
    memset(s, 0, sizeof *s);
}

void model_zero_grad(Model *m) {
    memset(m->grads, 0, m->n_params * sizeof(float));
}

static void zero(float *x, size_t n) { memset(x, 0, n * sizeof(float)); }

void model_backward(Model *m, Activations *a, BackwardScratch *s, const float *dv) {
    const Config *c = &m->cfg;
    const ParamViews *p = &m->p;
    const ParamViews *g = &m->g;
    int N = a->N, C = c->channels, S = c->img, pt = c->patch, gr = cfg_grid(c);
    int L = cfg_tokens(c), D = c->dim, P = cfg_patch_dim(c), F = c->freq_dim;
    int H = cfg_mlp_hidden(c), NL = N * L;
    size_t NLD = (size_t)NL * D, NLH = (size_t)NL * H;
    const float *cos_t = m->rope_cos, *sin_t = m->rope_sin;

    // unpatchify only moved numbers around: its backward is patchify
    patchify(s->dtokens, dv, N, C, S, pt);                        // (N, L, P)
    // final layer, in reverse
    float *dmf = s->dtmp, *dnf = s->dtmp2, *dada_f = s->dada;
    zero(dmf, NLD);
    linear_backward(dmf, g->head_w, g->head_b, s->dtokens, a->mf, p->head_w, NL, D, P);
    zero(dnf, NLD); zero(dada_f, (size_t)N * 2 * D);
    modulate_backward(dnf, dada_f, dada_f + D, dmf, a->nf, a->ada_f + D, N, L, D, 2 * D);
    zero(s->dresid, NLD);
    norm_backward(c, s->dresid, dnf, a->resid + 2 * (size_t)c->depth * NLD, a->stfa, a->stfb, NL);
    zero(s->dc_silu, (size_t)N * D);
    linear_backward(s->dc_silu, g->ada_f_w, g->ada_f_b, dada_f, a->c_silu, p->ada_f_w, N, D, 2 * D);

    // the blocks, last to first. s->dresid holds dL/d(residual stream).
    for (int b = c->depth - 1; b >= 0; b--) {
        const BlockParams *bp = &p->blocks[b];
        const BlockParams *bg = &g->blocks[b];
        const float *x_in = a->resid + (2 * (size_t)b) * NLD, *x_mid = x_in + NLD;
        const float *ada = a->ada[b];
        float *dada = s->dada;
        zero(dada, (size_t)N * 4 * D);
        // MLP half. x_out = x_mid + mlp(m2): dresid flows to x_mid unchanged
        // (the residual) and through the MLP into dm2.
        float *dm2 = s->dtmp;
        zero(dm2, NLD);
        if (c->mlp == MLP_SWIGLU) {
            float *dact = s->dbig, *dgate = s->dbig2, *dval = s->dbig3;
            zero(dact, NLH); zero(dgate, NLH); zero(dval, NLH);
            linear_backward(dact, bg->w3_w, bg->w3_b, s->dresid, a->h_act[b], bp->w3_w, NL, H, D);
            swiglu_backward(dgate, dval, dact, a->h_pre[b], a->h_val[b], NLH);
            linear_backward(dm2, bg->w1_w, bg->w1_b, dgate, a->m2[b], bp->w1_w, NL, D, H);
            linear_backward(dm2, bg->w2_w, bg->w2_b, dval, a->m2[b], bp->w2_w, NL, D, H);
        } else {
            float *dact = s->dbig, *dpre = s->dbig2;
            zero(dact, NLH); zero(dpre, NLH);
            linear_backward(dact, bg->fc2_w, bg->fc2_b, s->dresid, a->h_act[b], bp->fc2_w, NL, H, D);
            gelu_backward(dpre, dact, a->h_pre[b], NLH);
            linear_backward(dm2, bg->fc1_w, bg->fc1_b, dpre, a->m2[b], bp->fc1_w, NL, D, H);
        }
        float *dn2 = s->dtmp2;
        zero(dn2, NLD);
        modulate_backward(dn2, dada + 2 * D, dada + 3 * D, dm2, a->n2[b], ada + 3 * D, N, L, D, 4 * D);
        norm_backward(c, s->dresid, dn2, x_mid, a->st2a[b], a->st2b[b], NL);  // now dL/dx_mid
        // attention half. x_mid = x_in + proj(attn(m1))
        float *datt_out = s->dtmp, *dqkv = s->dbig;
        zero(datt_out, NLD); zero(dqkv, (size_t)NL * 3 * D);
        linear_backward(datt_out, bg->proj_w, bg->proj_b, s->dresid, a->att_out[b], bp->proj_w, NL, D, D);
        attention_backward(dqkv, bg->q_norm, bg->k_norm, datt_out, &a->att[b], s->att_scratch,
                           bp->q_norm, bp->k_norm, cos_t, sin_t, N, L, D, c->heads);
        float *dm1 = s->dtmp2;
        zero(dm1, NLD);
        linear_backward(dm1, bg->qkv_w, bg->qkv_b, dqkv, a->m1[b], bp->qkv_w, NL, D, 3 * D);
        float *dn1 = s->dtmp;
        zero(dn1, NLD);
        modulate_backward(dn1, dada, dada + D, dm1, a->n1[b], ada + D, N, L, D, 4 * D);
        norm_backward(c, s->dresid, dn1, x_in, a->st1a[b], a->st1b[b], NL);   // now dL/dx_in
        // this block's shift and scale came from c through its ada Linear
        linear_backward(s->dc_silu, bg->ada_w, bg->ada_b, dada, a->c_silu, bp->ada_w, N, D, 4 * D);
    }

    // the embedding: positions and the patch projection (the image itself
    // needs no gradient)
    if (c->pos == POS_LEARNED) pos_add_backward(g->pos_row, g->pos_col, s->dresid, N, gr, D);
    linear_backward(NULL, g->patch_w, g->patch_b, s->dresid, a->tokens, p->patch_w, NL, P, D);
    // the condition: back through SiLU, t_fc2, SiLU, t_fc1
    zero(s->dc, (size_t)N * D);
    silu_backward(s->dc, s->dc_silu, a->c, (size_t)N * D);
    zero(s->dt_hs, (size_t)N * D);
    linear_backward(s->dt_hs, g->t_fc2_w, g->t_fc2_b, s->dc, a->t_hs, p->t_fc2_w, N, D, D);
    zero(s->dt_h, (size_t)N * D);
    silu_backward(s->dt_h, s->dt_hs, a->t_h, (size_t)N * D);
    linear_backward(NULL, g->t_fc1_w, g->t_fc1_b, s->dt_h, a->temb, p->t_fc1_w, N, F, D);
}
