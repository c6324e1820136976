// model.c: TinyDiT. The parameter table (names as in PyTorch's state_dict),
// the initialisation, the activations of one pass, and the forward and
// backward passes of the whole model.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "rng.h"

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

// Linear weights and biases uniform in ±1/√fan_in (PyTorch's
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
// Activations: one allocation, carved into named pieces. The same carving
// runs twice: once with no base to count the floats, once to hand them out.
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
        a->norm1[b] = take(ar, NL * D);
        a->norm1_mean[b] = take(ar, NL); a->norm1_rstd[b] = take(ar, NL);
        a->mod1[b] = take(ar, NL * D);
        a->qkv[b] = take(ar, NL * 3 * D);
        float *cache = take(ar, attention_cache_floats(N, L, D, c->heads, qk));
        if (cache) attention_cache_init(&a->att[b], cache, N, L, D, c->heads, qk);
        a->att_out[b] = take(ar, NL * D);
        a->norm2[b] = take(ar, NL * D);
        a->norm2_mean[b] = take(ar, NL); a->norm2_rstd[b] = take(ar, NL);
        a->mod2[b] = take(ar, NL * D);
        a->h_pre[b] = take(ar, NL * H);
        a->h_val[b] = swiglu ? take(ar, NL * H) : NULL;
        a->h_act[b] = take(ar, NL * H);
    }
    a->ada_f = take(ar, N * 2 * D);
    a->norm_f = take(ar, NL * D);
    a->norm_f_mean = take(ar, NL); a->norm_f_rstd = take(ar, NL);
    a->mod_f = take(ar, NL * D);
    a->out_tokens = take(ar, NL * P);
    a->v = take(ar, N * c->channels * S * S);
    a->max_logit = take(ar, c->depth);
}

// The per-block arrays of pointers (one pointer per block each).
#define N_BLOCK_LISTS 14
static void block_lists(Activations *a, float ***lists[N_BLOCK_LISTS]) {
    float ***all[N_BLOCK_LISTS] = {
        &a->ada, &a->norm1, &a->norm1_mean, &a->norm1_rstd, &a->mod1, &a->qkv, &a->att_out,
        &a->norm2, &a->norm2_mean, &a->norm2_rstd, &a->mod2, &a->h_pre, &a->h_val, &a->h_act };
    for (int i = 0; i < N_BLOCK_LISTS; i++) lists[i] = all[i];
}

int activations_alloc(Activations *a, const Model *m, int N) {
    memset(a, 0, sizeof *a);
    a->N = N;
    int depth = m->cfg.depth;
    float ***lists[N_BLOCK_LISTS];
    block_lists(a, lists);
    for (int i = 0; i < N_BLOCK_LISTS; i++) {
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
    float ***lists[N_BLOCK_LISTS];
    block_lists(a, lists);
    for (int i = 0; i < N_BLOCK_LISTS; i++) free(*lists[i]);
    free(a->mem);
    free(a->att);
    memset(a, 0, sizeof *a);
}

// ---------------------------------------------------------------------------
// The sizes every pass uses, from the config and the batch size.
typedef struct {
    int N, C, S, patch, grid;   // images, channels, image side, patch side, S/patch
    int L, D, P, F, H, NL;      // tokens, width, patch values, freq features, MLP hidden, N·L
    size_t NLD, NLH;            // N·L·D, N·L·H
} Dims;

static Dims dims_of(const Config *c, int N) {
    Dims d;
    d.N = N; d.C = c->channels; d.S = c->img; d.patch = c->patch; d.grid = cfg_grid(c);
    d.L = cfg_tokens(c); d.D = c->dim; d.P = cfg_patch_dim(c); d.F = c->freq_dim;
    d.H = cfg_mlp_hidden(c); d.NL = N * d.L;
    d.NLD = (size_t)d.NL * d.D; d.NLH = (size_t)d.NL * d.H;
    return d;
}

// The block norm, LayerNorm or RMSNorm by the config, over rows of D.
// inp, out (R, D); mean, rstd (R). RMSNorm subtracts no mean: it leaves
// `mean` alone and saves only rstd.
static void norm_forward(const Config *c, float *out, float *mean, float *rstd,
                         const float *inp, int R) {
    if (c->norm == NORM_RMSNORM) rmsnorm_forward(out, rstd, inp, NULL, R, c->dim, NORM_EPS);
    else layernorm_forward(out, mean, rstd, inp, R, c->dim, NORM_EPS);
}

static void norm_backward(const Config *c, float *dinp, const float *dout, const float *inp,
                          const float *mean, const float *rstd, int R) {
    if (c->norm == NORM_RMSNORM) rmsnorm_backward(dinp, NULL, dout, inp, rstd, NULL, R, c->dim);
    else layernorm_backward(dinp, dout, inp, mean, rstd, R, c->dim);
}

static void add_inplace(float *y, const float *x, size_t n) {
    #pragma omp parallel for schedule(static) if (n > 32768)
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

// ---------------------------------------------------------------------------
// Forward: embed, the blocks, the final layer.

// The image becomes tokens (into the residual stream), the time becomes c.
static void embed_forward(const Model *m, Activations *a, Dims d, const float *x, const float *t) {
    const ParamViews *p = &m->p;
    // tokens: patches of the noisy image, embedded, plus their position
    patchify(a->tokens, x, d.N, d.C, d.S, d.patch);                 // (N, L, P)
    float *h = a->resid;                                            // (N, L, D)
    linear_forward(h, a->tokens, p->patch_w, p->patch_b, d.NL, d.P, d.D);
    if (m->cfg.pos == POS_LEARNED) pos_add_forward(h, p->pos_row, p->pos_col, d.N, d.grid, d.D);
    // the condition c: the time, as waves, through a two-layer MLP
    timestep_embedding(a->temb, t, d.N, d.F);                       // (N, F)
    linear_forward(a->t_h, a->temb, p->t_fc1_w, p->t_fc1_b, d.N, d.F, d.D);   // (N, D)
    silu_forward(a->t_hs, a->t_h, (size_t)d.N * d.D);
    linear_forward(a->c, a->t_hs, p->t_fc2_w, p->t_fc2_b, d.N, d.D, d.D);     // (N, D)
    silu_forward(a->c_silu, a->c, (size_t)d.N * d.D);
}

// The block's MLP half (mlp_forward, common/nn/mlp.c) on its hidden buffers.
static MlpHidden block_mlp_hidden(const Activations *a, int b) {
    return (MlpHidden){ a->h_pre[b], a->h_val[b], a->h_act[b] };
}

// Block b reads the residual stream at 2b and writes it at 2b+1 (after the
// attention half) and 2b+2 (after the MLP half).
static void block_forward(const Model *m, Activations *a, Dims d, int b) {
    const Config *c = &m->cfg;
    const BlockParams *bp = &m->p.blocks[b];
    int N = d.N, L = d.L, D = d.D, NL = d.NL;
    float *x_in = a->resid + (2 * (size_t)b) * d.NLD;   // (N, L, D) block input
    float *x_mid = x_in + d.NLD;                        // (N, L, D) after attention
    float *x_out = x_mid + d.NLD;                       // (N, L, D) after the MLP
    float *ada = a->ada[b];                             // (N, 4D)
    linear_forward(ada, a->c_silu, bp->ada_w, bp->ada_b, N, D, 4 * D);
    // attention half: x_mid = x_in + proj(attn(norm(x_in)·(1 + scale_a) + shift_a))
    norm_forward(c, a->norm1[b], a->norm1_mean[b], a->norm1_rstd[b], x_in, NL);   // (N, L, D)
    modulate_forward(a->mod1[b], a->norm1[b], ada, ada + D, N, L, D, 4 * D);      // (N, L, D)
    linear_forward(a->qkv[b], a->mod1[b], bp->qkv_w, bp->qkv_b, NL, D, 3 * D);     // (N, L, 3D)
    attention_forward(a->att_out[b], &a->att[b], a->qkv[b], bp->q_norm, bp->k_norm, NORM_EPS,
                      m->rope_cos, m->rope_sin, N, L, D, c->heads);                // (N, L, D)
    a->max_logit[b] = a->att[b].max_logit;
    linear_forward(x_mid, a->att_out[b], bp->proj_w, bp->proj_b, NL, D, D);        // (N, L, D)
    add_inplace(x_mid, x_in, d.NLD);
    // MLP half: x_out = x_mid + mlp(norm(x_mid)·(1 + scale_m) + shift_m)
    norm_forward(c, a->norm2[b], a->norm2_mean[b], a->norm2_rstd[b], x_mid, NL);  // (N, L, D)
    modulate_forward(a->mod2[b], a->norm2[b], ada + 2 * D, ada + 3 * D, N, L, D, 4 * D);
    mlp_forward(x_out, block_mlp_hidden(a, b), a->mod2[b], bp, c->mlp, NL, D, d.H); // (N, L, D)
    add_inplace(x_out, x_mid, d.NLD);
}

// The final layer: norm, modulate with its own shift and scale, project to patches.
static void final_layer_forward(const Model *m, Activations *a, Dims d) {
    const ParamViews *p = &m->p;
    int N = d.N, L = d.L, D = d.D;
    float *x_last = a->resid + 2 * (size_t)m->cfg.depth * d.NLD;                  // (N, L, D)
    linear_forward(a->ada_f, a->c_silu, p->ada_f_w, p->ada_f_b, N, D, 2 * D);      // (N, 2D)
    norm_forward(&m->cfg, a->norm_f, a->norm_f_mean, a->norm_f_rstd, x_last, d.NL);
    modulate_forward(a->mod_f, a->norm_f, a->ada_f, a->ada_f + D, N, L, D, 2 * D); // (N, L, D)
    linear_forward(a->out_tokens, a->mod_f, p->head_w, p->head_b, d.NL, D, d.P);   // (N, L, P)
    unpatchify(a->v, a->out_tokens, N, d.C, d.S, d.patch);                         // (N, C, S, S)
}

void model_forward(Model *m, Activations *a, const float *x, const float *t) {
    Dims d = dims_of(&m->cfg, a->N);
    embed_forward(m, a, d, x, t);
    for (int b = 0; b < m->cfg.depth; b++) block_forward(m, a, d, b);
    final_layer_forward(m, a, d);
}

// ---------------------------------------------------------------------------
// Backward: the same pieces in reverse order, each gradient into its own
// buffer (carved like the activations).
static void carve_scratch(BackwardScratch *s, const Model *m, int N, Arena *ar) {
    const Config *c = &m->cfg;
    Dims d = dims_of(c, N);
    size_t ND = (size_t)N * d.D;
    s->dtokens = take(ar, (size_t)d.NL * d.P);
    s->dmod_f = take(ar, d.NLD); s->dnorm_f = take(ar, d.NLD);
    s->dada_f = take(ar, 2 * ND);
    s->dresid = take(ar, d.NLD);
    s->dh_act = take(ar, d.NLH); s->dh_pre = take(ar, d.NLH);
    s->dh_val = c->mlp == MLP_SWIGLU ? take(ar, d.NLH) : NULL;
    s->dmod2 = take(ar, d.NLD); s->dnorm2 = take(ar, d.NLD);
    s->datt_out = take(ar, d.NLD);
    s->dqkv = take(ar, 3 * d.NLD);
    s->dmod1 = take(ar, d.NLD); s->dnorm1 = take(ar, d.NLD);
    s->dada = take(ar, 4 * ND);
    s->dc_silu = take(ar, ND); s->dc = take(ar, ND);
    s->dt_hs = take(ar, ND); s->dt_h = take(ar, ND);
    s->att_scratch = take(ar, attention_backward_scratch_floats(N, d.L, d.D, c->heads));
}

int backward_scratch_alloc(BackwardScratch *s, const Model *m, int N) {
    memset(s, 0, sizeof *s);
    Arena ar = { NULL, 0 };
    carve_scratch(s, m, N, &ar);           // first pass: count
    s->floats = ar.used;
    s->mem = calloc(s->floats, sizeof(float));
    if (!s->mem) return -1;
    ar.base = s->mem; ar.used = 0;
    carve_scratch(s, m, N, &ar);           // second pass: hand out
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

// The final layer in reverse, from dv: head, modulation, norm. Starts
// dresid = dL/d(last residual stream) and dc_silu with ada_f's share.
static void final_layer_backward(Model *m, Activations *a, BackwardScratch *s, Dims d,
                                 const float *dv) {
    const ParamViews *p = &m->p, *g = &m->g;
    int N = d.N, L = d.L, D = d.D, NL = d.NL;
    // unpatchify only moved numbers around: its backward is patchify
    patchify(s->dtokens, dv, N, d.C, d.S, d.patch);                               // (N, L, P)
    zero(s->dmod_f, d.NLD);                                                       // (N, L, D)
    linear_backward(s->dmod_f, g->head_w, g->head_b, s->dtokens, a->mod_f, p->head_w, NL, D, d.P);
    zero(s->dnorm_f, d.NLD); zero(s->dada_f, (size_t)N * 2 * D);                  // (N, L, D), (N, 2D)
    modulate_backward(s->dnorm_f, s->dada_f, s->dada_f + D, s->dmod_f, a->norm_f, a->ada_f + D,
                      N, L, D, 2 * D);
    zero(s->dresid, d.NLD);                                                       // (N, L, D)
    norm_backward(&m->cfg, s->dresid, s->dnorm_f, a->resid + 2 * (size_t)m->cfg.depth * d.NLD,
                  a->norm_f_mean, a->norm_f_rstd, NL);
    zero(s->dc_silu, (size_t)N * D);                                              // (N, D)
    linear_backward(s->dc_silu, g->ada_f_w, g->ada_f_b, s->dada_f, a->c_silu, p->ada_f_w, N, D, 2 * D);
}

// Block b in reverse. On entry dresid = dL/dx_out, on exit dL/dx_in; along
// the way the block's ada Linear adds its share to dc_silu.
static void block_backward(Model *m, Activations *a, BackwardScratch *s, Dims d, int b) {
    const Config *c = &m->cfg;
    const BlockParams *bp = &m->p.blocks[b];
    BlockParams *bg = &m->g.blocks[b];
    int N = d.N, L = d.L, D = d.D, NL = d.NL;
    const float *x_in = a->resid + (2 * (size_t)b) * d.NLD, *x_mid = x_in + d.NLD;  // (N, L, D)
    const float *ada = a->ada[b];                                                  // (N, 4D)
    float *dada = s->dada;                                                         // (N, 4D)
    zero(dada, (size_t)N * 4 * D);
    // MLP half. x_out = x_mid + mlp(mod2): dresid flows to x_mid unchanged
    // (the residual) and through the MLP into dmod2.
    zero(s->dmod2, d.NLD);                                                        // (N, L, D)
    mlp_backward(s->dmod2, bg, (MlpHidden){ s->dh_pre, s->dh_val, s->dh_act },
                 s->dresid, a->mod2[b], block_mlp_hidden(a, b), bp, c->mlp, NL, D, d.H);
    zero(s->dnorm2, d.NLD);
    modulate_backward(s->dnorm2, dada + 2 * D, dada + 3 * D, s->dmod2, a->norm2[b], ada + 3 * D,
                      N, L, D, 4 * D);
    norm_backward(c, s->dresid, s->dnorm2, x_mid, a->norm2_mean[b], a->norm2_rstd[b], NL);  // now dL/dx_mid
    // attention half. x_mid = x_in + proj(attn(mod1))
    zero(s->datt_out, d.NLD); zero(s->dqkv, 3 * d.NLD);                           // (N, L, D), (N, L, 3D)
    linear_backward(s->datt_out, bg->proj_w, bg->proj_b, s->dresid, a->att_out[b], bp->proj_w, NL, D, D);
    attention_backward(s->dqkv, bg->q_norm, bg->k_norm, s->datt_out, &a->att[b], s->att_scratch,
                       bp->q_norm, bp->k_norm, m->rope_cos, m->rope_sin, N, L, D, c->heads);
    zero(s->dmod1, d.NLD);
    linear_backward(s->dmod1, bg->qkv_w, bg->qkv_b, s->dqkv, a->mod1[b], bp->qkv_w, NL, D, 3 * D);
    zero(s->dnorm1, d.NLD);
    modulate_backward(s->dnorm1, dada, dada + D, s->dmod1, a->norm1[b], ada + D, N, L, D, 4 * D);
    norm_backward(c, s->dresid, s->dnorm1, x_in, a->norm1_mean[b], a->norm1_rstd[b], NL);   // now dL/dx_in
    // this block's shift and scale came from c through its ada Linear
    linear_backward(s->dc_silu, bg->ada_w, bg->ada_b, dada, a->c_silu, bp->ada_w, N, D, 4 * D);
}

// The embedding in reverse: positions and the patch projection (the image
// itself needs no gradient), then the condition back through SiLU, t_fc2,
// SiLU, t_fc1 (the time needs none either).
static void embed_backward(Model *m, Activations *a, BackwardScratch *s, Dims d) {
    const ParamViews *p = &m->p, *g = &m->g;
    int N = d.N, D = d.D;
    size_t ND = (size_t)N * D;
    if (m->cfg.pos == POS_LEARNED) pos_add_backward(g->pos_row, g->pos_col, s->dresid, N, d.grid, D);
    linear_backward(NULL, g->patch_w, g->patch_b, s->dresid, a->tokens, p->patch_w, d.NL, d.P, D);
    zero(s->dc, ND);                                                              // (N, D)
    silu_backward(s->dc, s->dc_silu, a->c, ND);
    zero(s->dt_hs, ND);                                                           // (N, D)
    linear_backward(s->dt_hs, g->t_fc2_w, g->t_fc2_b, s->dc, a->t_hs, p->t_fc2_w, N, D, D);
    zero(s->dt_h, ND);                                                            // (N, D)
    silu_backward(s->dt_h, s->dt_hs, a->t_h, ND);
    linear_backward(NULL, g->t_fc1_w, g->t_fc1_b, s->dt_h, a->temb, p->t_fc1_w, N, d.F, D);
}

void model_backward(Model *m, Activations *a, BackwardScratch *s, const float *dv) {
    Dims d = dims_of(&m->cfg, a->N);
    final_layer_backward(m, a, s, d, dv);
    // the blocks, last to first. s->dresid holds dL/d(residual stream).
    for (int b = m->cfg.depth - 1; b >= 0; b--) block_backward(m, a, s, d, b);
    embed_backward(m, a, s, d);
}
