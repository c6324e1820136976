// model.c: TinyDiT. The parameter table (names as in PyTorch's state_dict),
// the initialisation, the activations of one pass, and the forward and
// backward passes of the whole model.
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "rng.h"

// ---------------------------------------------------------------------------
// The parameter table: each parameter's PyTorch name, its shape and the view
// field that points at it, written once. build_table lists the tensors from
// it (the names a checkpoint stores, the shapes and counts the summary
// prints), make_views points the fields of ParamViews and BlockParams at them.

// A shape's sizes, by what they are in the config.
typedef enum { NONE, WIDTH, WIDTH_2, WIDTH_3, ADA_OUT, HIDDEN, PATCH_VALUES, FREQ, GRID, HEAD_DIM, LABELS } Size;

static int size_of(const ModelConfig *c, Size s) {
    switch (s) {
    case WIDTH:        return c->dim;
    case WIDTH_2:      return 2 * c->dim;
    case WIDTH_3:      return 3 * c->dim;
    case ADA_OUT:      return cfg_ada_chunks(c) * c->dim;   // 4D, or 6D with ada=zero
    case HIDDEN:       return cfg_mlp_hidden(c);
    case PATCH_VALUES: return cfg_patch_dim(c);
    case FREQ:         return c->freq_dim;
    case GRID:         return cfg_grid(c);
    case HEAD_DIM:     return cfg_head_dim(c);
    case LABELS:       return c->classes + 1;                  // the classes and the null label
    case NONE:         break;
    }
    return 1;
}

// Which configs have the tensor.
typedef enum { ALWAYS, IF_LEARNED_POS, IF_QK_NORM, IF_GELU, IF_SWIGLU, IF_CLASSES } When;

static int present(const ModelConfig *c, When w) {
    switch (w) {
    case IF_LEARNED_POS: return c->pos == POS_LEARNED;
    case IF_QK_NORM:     return c->qk_norm;
    case IF_GELU:        return c->mlp == MLP_GELU;
    case IF_SWIGLU:      return c->mlp == MLP_SWIGLU;
    case IF_CLASSES:     return c->classes > 0;
    case ALWAYS:         break;
    }
    return 1;
}

// One row: a Linear (name.weight of shape (rows, cols) = (out, in), and
// name.bias (out) unless bias=false), a norm's gain (name, (rows)), a
// position table or the labels' table (name, (rows, cols)); how it starts
// (a Linear's weight and bias alike); the views: byte offsets of float *
// fields in ParamViews (top level) or BlockParams (in a block).
typedef struct {
    const char *name;
    When when;
    ParamKind kind;
    Size rows, cols;
    ParamInit init;
    size_t weight_view, bias_view;
} ParamRow;

#define TOP(field) offsetof(ParamViews, field)
#define BLOCK(field) offsetof(BlockParams, field)

// In the order PyTorch's named_parameters() lists them: the model's own
// tensors and modules before the blocks, each block, the ones after.
static const ParamRow BEFORE_BLOCKS[] = {
    { "pos_row",     IF_LEARNED_POS, PARAM_POSITION, GRID,  WIDTH,        INIT_NORMAL, TOP(pos_row), 0 },
    { "pos_col",     IF_LEARNED_POS, PARAM_POSITION, GRID,  WIDTH,        INIT_NORMAL, TOP(pos_col), 0 },
    { "patch_embed", ALWAYS,         PARAM_LINEAR,   WIDTH, PATCH_VALUES, INIT_FAN_IN, TOP(patch_w), TOP(patch_b) },
    { "t_fc1",       ALWAYS,         PARAM_LINEAR,   WIDTH, FREQ,         INIT_FAN_IN, TOP(t_fc1_w), TOP(t_fc1_b) },
    { "t_fc2",       ALWAYS,         PARAM_LINEAR,   WIDTH, WIDTH,        INIT_FAN_IN, TOP(t_fc2_w), TOP(t_fc2_b) },
    { "y_embed.weight", IF_CLASSES,  PARAM_EMBEDDING, LABELS, WIDTH,      INIT_NORMAL, TOP(y_embed), 0 },
};
static const ParamRow IN_EACH_BLOCK[] = {   // names after "blocks.<b>."
    { "attn.qkv",           ALWAYS,     PARAM_LINEAR, WIDTH_3,  WIDTH,  INIT_FAN_IN, BLOCK(qkv_w),  BLOCK(qkv_b) },
    { "attn.proj",          ALWAYS,     PARAM_LINEAR, WIDTH,    WIDTH,  INIT_FAN_IN, BLOCK(proj_w), BLOCK(proj_b) },
    { "attn.q_norm.weight", IF_QK_NORM, PARAM_GAIN,   HEAD_DIM, NONE,   INIT_ONE,    BLOCK(q_norm), 0 },
    { "attn.k_norm.weight", IF_QK_NORM, PARAM_GAIN,   HEAD_DIM, NONE,   INIT_ONE,    BLOCK(k_norm), 0 },
    { "mlp.w1",             IF_SWIGLU,  PARAM_LINEAR, HIDDEN,   WIDTH,  INIT_FAN_IN, BLOCK(w1_w),   BLOCK(w1_b) },
    { "mlp.w2",             IF_SWIGLU,  PARAM_LINEAR, HIDDEN,   WIDTH,  INIT_FAN_IN, BLOCK(w2_w),   BLOCK(w2_b) },
    { "mlp.w3",             IF_SWIGLU,  PARAM_LINEAR, WIDTH,    HIDDEN, INIT_FAN_IN, BLOCK(w3_w),   BLOCK(w3_b) },
    { "mlp.fc1",            IF_GELU,    PARAM_LINEAR, HIDDEN,   WIDTH,  INIT_FAN_IN, BLOCK(fc1_w),  BLOCK(fc1_b) },
    { "mlp.fc2",            IF_GELU,    PARAM_LINEAR, WIDTH,    HIDDEN, INIT_FAN_IN, BLOCK(fc2_w),  BLOCK(fc2_b) },
    { "ada",                ALWAYS,     PARAM_LINEAR, ADA_OUT,  WIDTH,  INIT_ZERO_IF_ADA_ZERO, BLOCK(ada_w), BLOCK(ada_b) },
};
static const ParamRow AFTER_BLOCKS[] = {
    { "ada_f", ALWAYS, PARAM_LINEAR, WIDTH_2,      WIDTH, INIT_ZERO_IF_ADA_ZERO, TOP(ada_f_w), TOP(ada_f_b) },
    { "head",  ALWAYS, PARAM_LINEAR, PATCH_VALUES, WIDTH, INIT_ZERO_IF_ADA_ZERO, TOP(head_w),  TOP(head_b) },
};
#define ROWS(a) (int)(sizeof(a) / sizeof(a[0]))

// Tensors of the largest config with these rows: a weight and a bias each.
static int max_tensors(int depth) {
    return 2 * (ROWS(BEFORE_BLOCKS) + depth * ROWS(IN_EACH_BLOCK) + ROWS(AFTER_BLOCKS));
}

// Appends one tensor, a slice of the flat arrays right after the last one
// (counted only, when the model has no table: model_count_params).
static void add_tensor(Model *m, const char *name, ParamKind kind, ParamInit init, int d0, int d1,
                       int block, size_t view) {
    ParamTensor t = { .kind = kind, .init = init, .ndim = d1 > 0 ? 2 : 1, .shape = { d0, d1 > 0 ? d1 : 1 },
                      .offset = m->n_params, .block = block, .view = view };
    snprintf(t.name, sizeof t.name, "%s", name);
    t.size = (size_t)t.shape[0] * t.shape[1];
    if (m->tensors) m->tensors[m->n_tensors] = t;
    m->n_tensors++;
    m->n_params += t.size;
}

// The tensors of n rows, their names after `prefix`; block -1 at the top level.
static void add_rows(Model *m, const ParamRow *rows, int n, const char *prefix, int block) {
    const ModelConfig *c = &m->cfg;
    char name[PARAM_NAME_LEN];
    for (int i = 0; i < n; i++) {
        const ParamRow *r = &rows[i];
        if (!present(c, r->when)) continue;
        int d0 = size_of(c, r->rows), d1 = r->cols == NONE ? 0 : size_of(c, r->cols);
        // adaLN-Zero starts every block's ada, ada_f and head at zero: each
        // block starts as the identity and the model's first output is 0
        ParamInit init = r->init;
        if (init == INIT_ZERO_IF_ADA_ZERO) init = c->ada == ADA_ZERO ? INIT_ZERO : INIT_FAN_IN;
        if (r->kind != PARAM_LINEAR) {
            snprintf(name, sizeof name, "%s%s", prefix, r->name);
            add_tensor(m, name, r->kind, init, d0, d1, block, r->weight_view);
            continue;
        }
        snprintf(name, sizeof name, "%s%s.weight", prefix, r->name);
        add_tensor(m, name, PARAM_LINEAR, init, d0, d1, block, r->weight_view);
        if (c->bias) {
            snprintf(name, sizeof name, "%s%s.bias", prefix, r->name);
            add_tensor(m, name, PARAM_LINEAR_BIAS, init, d0, 0, block, r->bias_view);
        }
    }
}

static void build_table(Model *m) {
    char prefix[24];   // "blocks.<b>."
    m->n_tensors = 0;
    m->n_params = 0;
    add_rows(m, BEFORE_BLOCKS, ROWS(BEFORE_BLOCKS), "", -1);
    for (int b = 0; b < m->cfg.depth; b++) {
        snprintf(prefix, sizeof prefix, "blocks.%d.", b);
        add_rows(m, IN_EACH_BLOCK, ROWS(IN_EACH_BLOCK), prefix, b);
    }
    add_rows(m, AFTER_BLOCKS, ROWS(AFTER_BLOCKS), "", -1);
}

const ParamTensor *model_find(const Model *m, const char *name) {
    for (int i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0) return &m->tensors[i];
    return NULL;
}

// Points the views (p.qkv_w, g.qkv_w, ...) into one flat array: each
// tensor's field, found by its byte offset in ParamViews or in its block's
// BlockParams. The fields of tensors this config lacks stay NULL.
static void make_views(const Model *m, float *base, ParamViews *v) {
    for (int i = 0; i < m->n_tensors; i++) {
        const ParamTensor *t = &m->tensors[i];
        char *owner = t->block < 0 ? (char *)v : (char *)&v->blocks[t->block];
        *(float **)(owner + t->view) = base + t->offset;
    }
}

size_t model_count_params(const ModelConfig *cfg) {
    Model m;
    memset(&m, 0, sizeof m);
    m.cfg = *cfg;
    build_table(&m);
    return m.n_params;
}

int model_build(Model *m, const ModelConfig *cfg, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    if (model_config_check(cfg, err, errlen) != 0) return -1;
    m->cfg = *cfg;
    m->tensors = malloc(sizeof(ParamTensor) * max_tensors(cfg->depth));
    if (!m->tensors) {
        snprintf(err, errlen, "out of memory for the tensor table of %d blocks", cfg->depth);
        return -1;
    }
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
    // Gains start at 1 (the identity) even before model_init_weights: a
    // model about to be loaded or tested must not start with zero gains.
    for (int i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].init == INIT_ONE)
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
    free(m->tensors);
    free(m->params); free(m->grads);
    free(m->p.blocks); free(m->g.blocks);
    free(m->rope_cos); free(m->rope_sin);
    memset(m, 0, sizeof *m);
}

// Each tensor as its row of the table says: Linear weights and biases
// uniform in ±1/√fan_in (PyTorch's default), position and label tables N(0, 0.02²),
// gains 1, zeros 0. Drawn tensor by tensor in table order from one stream;
// a tensor of ones or zeros draws nothing.
void model_init_weights(Model *m, unsigned long long seed) {
    Rng r;
    rng_seed(&r, seed);
    for (int i = 0; i < m->n_tensors; i++) {
        const ParamTensor *t = &m->tensors[i];
        float *w = m->params + t->offset;
        switch (t->init) {
        case INIT_ONE:
            for (size_t j = 0; j < t->size; j++) w[j] = 1.0f;
            break;
        case INIT_ZERO:
            memset(w, 0, t->size * sizeof(float));
            break;
        case INIT_NORMAL:
            rng_fill_normal(&r, w, (long)t->size, 0.02f);
            break;
        case INIT_FAN_IN:
        case INIT_ZERO_IF_ADA_ZERO: {   // resolved by build_table: never here
            // a weight (out, in) has fan_in = in; its bias shares the fan_in of
            // the weight just before it in the table.
            int fan_in = t->ndim == 2 ? t->shape[1] : m->tensors[i - 1].shape[1];
            float bound = 1.0f / sqrtf((float)fan_in);
            rng_fill_uniform(&r, w, (long)t->size, -bound, bound);
            break;
        }
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

static void carve_activations(Activations *a, const Model *m, Arena *ar, bool keep_probs) {
    const ModelConfig *c = &m->cfg;
    size_t N = a->N, L = cfg_tokens(c), D = c->dim, P = cfg_patch_dim(c), F = c->freq_dim;
    size_t H = cfg_mlp_hidden(c), NL = N * L, S = c->img;
    int swiglu = c->mlp == MLP_SWIGLU, qk = c->qk_norm, gated = c->ada == ADA_ZERO;
    a->tokens = take(ar, NL * P);
    a->temb = take(ar, N * F);
    a->t_h = take(ar, N * D); a->t_hs = take(ar, N * D);
    a->c = take(ar, N * D);   a->c_silu = take(ar, N * D);
    a->resid = take(ar, (2 * (size_t)c->depth + 1) * NL * D);
    for (int b = 0; b < c->depth; b++) {
        a->ada[b] = take(ar, N * cfg_ada_chunks(c) * D);
        a->norm1_mean[b] = take(ar, NL); a->norm1_rstd[b] = take(ar, NL);
        a->mod1[b] = take(ar, NL * D);
        a->qkv[b] = take(ar, NL * 3 * D);
        // the softmax probabilities (N, H, L, L), last in the cache, only when kept
        size_t probs = keep_probs ? 0 : N * c->heads * L * L;
        float *cache = take(ar, attention_cache_floats(N, L, D, c->heads, qk) - probs);
        if (cache) attention_cache_init(&a->att[b], cache, N, L, D, c->heads, qk);
        if (cache && !keep_probs) a->att[b].att = NULL;
        a->att_out[b] = take(ar, NL * D);
        a->branch_a[b] = gated ? take(ar, NL * D) : NULL;
        a->norm2_mean[b] = take(ar, NL); a->norm2_rstd[b] = take(ar, NL);
        a->mod2[b] = take(ar, NL * D);
        a->h_pre[b] = take(ar, NL * H);
        a->h_val[b] = swiglu ? take(ar, NL * H) : NULL;
        a->h_act[b] = take(ar, NL * H);
        a->branch_m[b] = gated ? take(ar, NL * D) : NULL;
    }
    a->ada_f = take(ar, N * 2 * D);
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
        &a->ada, &a->norm1_mean, &a->norm1_rstd, &a->mod1, &a->qkv, &a->att_out, &a->branch_a,
        &a->norm2_mean, &a->norm2_rstd, &a->mod2, &a->h_pre, &a->h_val, &a->h_act, &a->branch_m };
    for (int i = 0; i < N_BLOCK_LISTS; i++) lists[i] = all[i];
}

int activations_alloc(Activations *a, const Model *m, int N, bool keep_probs) {
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
    if (m->cfg.classes > 0 && !(a->labels = calloc(N, sizeof(int)))) return -1;
    Arena ar = { NULL, 0 };
    carve_activations(a, m, &ar, keep_probs);   // first pass: count
    a->floats = ar.used;
    a->mem = calloc(a->floats, sizeof(float));
    if (!a->mem) return -1;
    ar.base = a->mem; ar.used = 0;
    carve_activations(a, m, &ar, keep_probs);   // second pass: hand out
    return 0;
}

void activations_free(Activations *a) {
    float ***lists[N_BLOCK_LISTS];
    block_lists(a, lists);
    for (int i = 0; i < N_BLOCK_LISTS; i++) free(*lists[i]);
    free(a->mem);
    free(a->att);
    free(a->labels);
    memset(a, 0, sizeof *a);
}

// ---------------------------------------------------------------------------
// The sizes every pass uses, from the config and the batch size.
typedef struct {
    int N, C, S, patch, grid;   // images, channels, image side, patch side, S/patch
    int L, D, P, F, H, NL;      // tokens, width, patch values, freq features, MLP hidden, N·L
    size_t NLD, NLH;            // N·L·D, N·L·H
} Dims;

static Dims dims_of(const ModelConfig *c, int N) {
    Dims d;
    d.N = N; d.C = c->channels; d.S = c->img; d.patch = c->patch; d.grid = cfg_grid(c);
    d.L = cfg_tokens(c); d.D = c->dim; d.P = cfg_patch_dim(c); d.F = c->freq_dim;
    d.H = cfg_mlp_hidden(c); d.NL = N * d.L;
    d.NLD = (size_t)d.NL * d.D; d.NLH = (size_t)d.NL * d.H;
    return d;
}

// The block norm, LayerNorm or RMSNorm by the config, then the adaLN
// modulation, in one pass (norms.c: the same per-row norm functions as
// layernorm_forward and rmsnorm_forward, then modulate_forward's arithmetic).
// x, out (N, L, D); mean, rstd (N·L); shift and scale rows of `stride`
// floats per image. RMSNorm subtracts no mean: it leaves `mean` alone and
// saves only rstd.
static NormRows block_norm(const ModelConfig *c) {
    return c->norm == NORM_RMSNORM ? NORM_ROWS_RMSNORM : NORM_ROWS_LAYERNORM;
}

static void norm_modulate(const ModelConfig *c, float *out, float *mean, float *rstd, const float *x,
                          const float *shift, const float *scale, int N, int L, int stride) {
    norm_modulate_forward(out, block_norm(c), mean, rstd, x, shift, scale, N, L, c->dim, stride,
                          NORM_EPS);
}

static void norm_modulate_back(const ModelConfig *c, float *dx, float *dshift, float *dscale,
                               const float *dout, const float *x, const float *mean,
                               const float *rstd, const float *scale, int N, int L, int stride) {
    norm_modulate_backward(dx, dshift, dscale, dout, block_norm(c), x, mean, rstd, scale, N, L,
                           c->dim, stride);
}

static void add_inplace(float *y, const float *x, size_t n) {
    #pragma omp parallel for schedule(static) if (n > OMP_MIN_FLOATS)
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

// ---------------------------------------------------------------------------
// Forward: embed, the blocks, the final layer.

// Class-conditional: c += y_embed[y], each image's label's row (no labels:
// the null label's), the labels kept for the backward.
static void label_forward(const Model *m, Activations *a, Dims d, const int *y) {
    for (int n = 0; n < d.N; n++) a->labels[n] = y ? y[n] : m->cfg.classes;     // (N)
    label_embed_forward(a->c, m->p.y_embed, a->labels, d.N, d.D);             // (N, D)
}

// The image becomes tokens (into the residual stream), the time (and the label) become c.
static void embed_forward(const Model *m, Activations *a, Dims d, const float *x, const float *t, const int *y) {
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
    if (m->cfg.classes > 0) label_forward(m, a, d, y);                         // (N, D)
    silu_forward(a->c_silu, a->c, (size_t)d.N * d.D);
}

// A block's ada output by name (model.h): the one place that knows its
// layout. The same view names the activation a->ada[b] and its gradient s->dada.
AdaChunks ada_chunks(const ModelConfig *c, float *ada) {
    int D = c->dim;
    if (c->ada == ADA_ZERO)
        return (AdaChunks){ ada, ada + D, ada + 2 * D, ada + 3 * D, ada + 4 * D, ada + 5 * D, 6 * D };
    return (AdaChunks){ ada, ada + D, NULL, ada + 2 * D, ada + 3 * D, NULL, 4 * D };
}

// The end of a block half: x_next = x + branch, or with ada=zero
// x + gate · branch. Plain, the half's last layer wrote its branch into
// x_next itself; gated, into its own buffer, which the backward needs.
static void residual_add(const ModelConfig *c, float *x_next, const float *x, const float *branch,
                         const float *gate, Dims d, int stride) {
    if (c->ada == ADA_ZERO) gate_residual_forward(x_next, x, branch, gate, d.N, d.L, d.D, stride);
    else add_inplace(x_next, x, d.NLD);
}

// The upgrades inside the attention, each by its switch: qk_norm (step 3)
// hands it the block's q and k gains, pos=rope2d (step 5) the rotation
// tables; a switch that is off hands it NULL, and attention_forward skips
// what it is not given (layers.h).
typedef struct { const float *q_gain, *k_gain, *rope_cos, *rope_sin; } AttentionUpgrades;

static AttentionUpgrades attention_upgrades(const Model *m, const BlockParams *p) {
    const ModelConfig *c = &m->cfg;
    AttentionUpgrades u = { NULL, NULL, NULL, NULL };
    if (c->qk_norm) { u.q_gain = p->q_norm; u.k_gain = p->k_norm; }
    if (c->pos == POS_ROPE2D) { u.rope_cos = m->rope_cos; u.rope_sin = m->rope_sin; }
    return u;
}

// The block's MLP half on its hidden buffers: GELU's, or SwiGLU's with
// mlp=swiglu (step 4; both in common/nn/mlp.c).
static MlpHidden block_mlp_hidden(const Activations *a, int b) {
    return (MlpHidden){ a->h_pre[b], a->h_val[b], a->h_act[b] };
}

static void block_mlp_forward(const ModelConfig *c, float *out, MlpHidden h, const float *inp,
                              const BlockParams *p, int R, int H) {
    if (c->mlp == MLP_SWIGLU)
        swiglu_mlp_forward(out, h, inp, p->w1_w, p->w1_b, p->w2_w, p->w2_b, p->w3_w, p->w3_b,
                           R, c->dim, H);
    else
        gelu_mlp_forward(out, h, inp, p->fc1_w, p->fc1_b, p->fc2_w, p->fc2_b, R, c->dim, H);
}

// The MLP half in reverse, either kind. Its one caller is block_backward,
// a stub in a workbook: `unused` keeps that build free of warnings.
__attribute__((unused))
static void block_mlp_backward(const ModelConfig *c, float *dinp, BlockParams *g, MlpHidden dh,
                               const float *dout, const float *inp, MlpHidden h,
                               const BlockParams *p, int R, int H) {
    if (c->mlp == MLP_SWIGLU)
        swiglu_mlp_backward(dinp, g->w1_w, g->w1_b, g->w2_w, g->w2_b, g->w3_w, g->w3_b, dh, dout,
                            inp, h, p->w1_w, p->w2_w, p->w3_w, R, c->dim, H);
    else
        gelu_mlp_backward(dinp, g->fc1_w, g->fc1_b, g->fc2_w, g->fc2_b, dh, dout, inp, h,
                          p->fc1_w, p->fc2_w, R, c->dim, H);
}

// Block b reads the residual stream at 2b and writes it at 2b+1 (after the
// attention half) and 2b+2 (after the MLP half).
static void block_forward(const Model *m, Activations *a, Dims d, int b) {
    const ModelConfig *c = &m->cfg;
    const BlockParams *bp = &m->p.blocks[b];
    int N = d.N, L = d.L, D = d.D, NL = d.NL;
    float *x_in = a->resid + (2 * (size_t)b) * d.NLD;   // (N, L, D) block input
    float *x_mid = x_in + d.NLD;                        // (N, L, D) after attention
    float *x_out = x_mid + d.NLD;                       // (N, L, D) after the MLP
    AdaChunks ada = ada_chunks(c, a->ada[b]);           // (N, 4D) as four (N, D), or six with ada=zero
    linear_forward(a->ada[b], a->c_silu, bp->ada_w, bp->ada_b, N, D, ada.stride);
    // with ada=zero each half's output is kept apart, to be gated
    float *branch_a = c->ada == ADA_ZERO ? a->branch_a[b] : x_mid;                 // (N, L, D)
    float *branch_m = c->ada == ADA_ZERO ? a->branch_m[b] : x_out;                 // (N, L, D)
    // attention half: x_mid = x_in + [gate_a ·] proj(attn(norm(x_in)·(1 + scale_a) + shift_a))
    norm_modulate(c, a->mod1[b], a->norm1_mean[b], a->norm1_rstd[b], x_in, ada.shift_a,
                  ada.scale_a, N, L, ada.stride);                                  // (N, L, D)
    linear_forward(a->qkv[b], a->mod1[b], bp->qkv_w, bp->qkv_b, NL, D, 3 * D);     // (N, L, 3D)
    AttentionUpgrades up = attention_upgrades(m, bp);                              // qk_norm, rope2d
    attention_forward(a->att_out[b], &a->att[b], a->qkv[b], up.q_gain, up.k_gain, NORM_EPS,
                      up.rope_cos, up.rope_sin, N, L, D, c->heads);                // (N, L, D)
    a->max_logit[b] = a->att[b].max_logit;
    linear_forward(branch_a, a->att_out[b], bp->proj_w, bp->proj_b, NL, D, D);     // (N, L, D)
    residual_add(c, x_mid, x_in, branch_a, ada.gate_a, d, ada.stride);
    // MLP half: x_out = x_mid + [gate_m ·] mlp(norm(x_mid)·(1 + scale_m) + shift_m)
    norm_modulate(c, a->mod2[b], a->norm2_mean[b], a->norm2_rstd[b], x_mid, ada.shift_m,
                  ada.scale_m, N, L, ada.stride);                                  // (N, L, D)
    block_mlp_forward(c, branch_m, block_mlp_hidden(a, b), a->mod2[b], bp, NL, d.H);  // (N, L, D)
    residual_add(c, x_out, x_mid, branch_m, ada.gate_m, d, ada.stride);
}

// The final layer: norm, modulate with its own shift and scale, project to patches.
static void final_layer_forward(const Model *m, Activations *a, Dims d) {
    const ParamViews *p = &m->p;
    int N = d.N, L = d.L, D = d.D;
    float *x_last = a->resid + 2 * (size_t)m->cfg.depth * d.NLD;                  // (N, L, D)
    float *shift_f = a->ada_f, *scale_f = a->ada_f + D;                            // (N, D) each, rows 2D apart
    linear_forward(a->ada_f, a->c_silu, p->ada_f_w, p->ada_f_b, N, D, 2 * D);      // (N, 2D)
    norm_modulate(&m->cfg, a->mod_f, a->norm_f_mean, a->norm_f_rstd, x_last, shift_f, scale_f,
                  N, L, 2 * D);                                                    // (N, L, D)
    linear_forward(a->out_tokens, a->mod_f, p->head_w, p->head_b, d.NL, D, d.P);   // (N, L, P)
    unpatchify(a->v, a->out_tokens, N, d.C, d.S, d.patch);                         // (N, C, S, S)
}

void model_forward(Model *m, Activations *a, const float *x, const float *t, const int *y) {
    Dims d = dims_of(&m->cfg, a->N);
    embed_forward(m, a, d, x, t, y);
    for (int b = 0; b < m->cfg.depth; b++) block_forward(m, a, d, b);
    final_layer_forward(m, a, d);
}

// ---------------------------------------------------------------------------
// Backward: the same pieces in reverse order, each gradient into its own
// buffer (carved like the activations).
static void carve_scratch(BackwardScratch *s, const Model *m, int N, Arena *ar) {
    const ModelConfig *c = &m->cfg;
    Dims d = dims_of(c, N);
    size_t ND = (size_t)N * d.D;
    s->dtokens = take(ar, (size_t)d.NL * d.P);   // written whole by patchify
    s->att_scratch = take(ar, attention_backward_scratch_floats(N, d.L, d.D, c->heads));
    // The rest is accumulated into (every backward adds, see layers.h), so it
    // is carved in two runs that model_backward clears: once per pass ...
    size_t start = ar->used;
    s->per_pass = take(ar, 0);
    s->dmod_f = take(ar, d.NLD);
    s->dada_f = take(ar, 2 * ND);
    s->dresid = take(ar, d.NLD);
    s->dc_silu = take(ar, ND); s->dc = take(ar, ND);
    s->dt_hs = take(ar, ND); s->dt_h = take(ar, ND);
    s->per_pass_floats = ar->used - start;
    // ... and before each block
    start = ar->used;
    s->per_block = take(ar, 0);
    s->dh_act = take(ar, d.NLH); s->dh_pre = take(ar, d.NLH);
    s->dh_val = c->mlp == MLP_SWIGLU ? take(ar, d.NLH) : NULL;
    s->dmod2 = take(ar, d.NLD);
    s->dbranch_m = c->ada == ADA_ZERO ? take(ar, d.NLD) : NULL;
    s->dbranch_a = c->ada == ADA_ZERO ? take(ar, d.NLD) : NULL;
    s->datt_out = take(ar, d.NLD);
    s->dqkv = take(ar, 3 * d.NLD);
    s->dmod1 = take(ar, d.NLD);
    s->dada = take(ar, (size_t)cfg_ada_chunks(c) * ND);
    s->per_block_floats = ar->used - start;
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

// The final layer in reverse, from dv: head, modulation, norm. Starts
// dresid = dL/d(last residual stream) and dc_silu with ada_f's share.
static void final_layer_backward(Model *m, Activations *a, BackwardScratch *s, Dims d,
                                 const float *dv) {
    const ParamViews *p = &m->p, *g = &m->g;
    int N = d.N, L = d.L, D = d.D, NL = d.NL;
    // unpatchify only moved numbers around: its backward is patchify
    patchify(s->dtokens, dv, N, d.C, d.S, d.patch);                               // (N, L, P)
    linear_backward(s->dmod_f, g->head_w, g->head_b, s->dtokens, a->mod_f, p->head_w, NL, D, d.P);
    const float *scale_f = a->ada_f + D;                                          // (N, D), rows 2D apart
    float *dshift_f = s->dada_f, *dscale_f = s->dada_f + D;
    norm_modulate_back(&m->cfg, s->dresid, dshift_f, dscale_f, s->dmod_f,
                       a->resid + 2 * (size_t)m->cfg.depth * d.NLD, a->norm_f_mean, a->norm_f_rstd,
                       scale_f, N, L, 2 * D);
    linear_backward(s->dc_silu, g->ada_f_w, g->ada_f_b, s->dada_f, a->c_silu, p->ada_f_w, N, D, 2 * D);
}

// The gradient of a block half's branch: dL/dx_next itself (plain), or with
// ada=zero gate · dL/dx_next, into dbranch, while the gate gets its share.
// Either way x's gradient is dL/dx_next, which dresid already holds.
// (`unused`: as block_mlp_backward, its caller is a workbook's stub.)
__attribute__((unused))
static const float *residual_back(const ModelConfig *c, float *dbranch, float *dgate,
                                  const float *dx_next, const float *branch, const float *gate,
                                  Dims d, int stride) {
    if (c->ada != ADA_ZERO) return dx_next;
    gate_residual_backward(dbranch, dgate, dx_next, branch, gate, d.N, d.L, d.D, stride);
    return dbranch;
}

// Block b in reverse (model.h). On entry dresid = dL/dx_out, on exit
// dL/dx_in; along the way the block's ada Linear adds its share to dc_silu.
// An exercise (docs/exercises.md#block_backward), so not static: the grader
// swaps it (scripts/grade.sh).
void block_backward(Model *m, Activations *a, BackwardScratch *s, int b) {
    // EXERCISE(block_backward) begin
    const ModelConfig *c = &m->cfg;
    Dims d = dims_of(c, a->N);
    const BlockParams *bp = &m->p.blocks[b];
    BlockParams *bg = &m->g.blocks[b];
    int N = d.N, L = d.L, D = d.D, NL = d.NL;
    const float *x_in = a->resid + (2 * (size_t)b) * d.NLD, *x_mid = x_in + d.NLD;  // (N, L, D)
    AdaChunks ada = ada_chunks(c, a->ada[b]), dada = ada_chunks(c, s->dada);       // (N, 4D or 6D) each
    // MLP half. x_out = x_mid + [gate_m ·] mlp(mod2): dresid flows to x_mid
    // unchanged (the residual) and through the gate and the MLP into dmod2.
    const float *dbranch_m = residual_back(c, s->dbranch_m, dada.gate_m, s->dresid, a->branch_m[b],
                                           ada.gate_m, d, ada.stride);            // (N, L, D)
    block_mlp_backward(c, s->dmod2, bg, (MlpHidden){ s->dh_pre, s->dh_val, s->dh_act },
                       dbranch_m, a->mod2[b], block_mlp_hidden(a, b), bp, NL, d.H);
    norm_modulate_back(c, s->dresid, dada.shift_m, dada.scale_m, s->dmod2, x_mid, a->norm2_mean[b],
                       a->norm2_rstd[b], ada.scale_m, N, L, ada.stride);   // now dresid = dL/dx_mid
    // attention half. x_mid = x_in + [gate_a ·] proj(attn(mod1))
    const float *dbranch_a = residual_back(c, s->dbranch_a, dada.gate_a, s->dresid, a->branch_a[b],
                                           ada.gate_a, d, ada.stride);            // (N, L, D)
    linear_backward(s->datt_out, bg->proj_w, bg->proj_b, dbranch_a, a->att_out[b], bp->proj_w, NL, D, D);
    AttentionUpgrades up = attention_upgrades(m, bp);                              // qk_norm, rope2d
    attention_backward(s->dqkv, bg->q_norm, bg->k_norm, s->datt_out, &a->att[b], s->att_scratch,
                       up.q_gain, up.k_gain, up.rope_cos, up.rope_sin, N, L, D, c->heads);
    linear_backward(s->dmod1, bg->qkv_w, bg->qkv_b, s->dqkv, a->mod1[b], bp->qkv_w, NL, D, 3 * D);
    norm_modulate_back(c, s->dresid, dada.shift_a, dada.scale_a, s->dmod1, x_in, a->norm1_mean[b],
                       a->norm1_rstd[b], ada.scale_a, N, L, ada.stride);   // now dresid = dL/dx_in
    // this block's shift, scale (and gates) came from c through its ada Linear
    linear_backward(s->dc_silu, bg->ada_w, bg->ada_b, s->dada, a->c_silu, bp->ada_w, N, D, ada.stride);
    // EXERCISE end
}

// The embedding in reverse: positions and the patch projection (the image
// itself needs no gradient), then the condition back through SiLU into the
// label rows used (class-conditional) and through t_fc2, SiLU, t_fc1 (the
// time and the labels need none either).
static void embed_backward(Model *m, Activations *a, BackwardScratch *s, Dims d) {
    const ParamViews *p = &m->p, *g = &m->g;
    int N = d.N, D = d.D;
    size_t ND = (size_t)N * D;
    if (m->cfg.pos == POS_LEARNED) pos_add_backward(g->pos_row, g->pos_col, s->dresid, N, d.grid, D);
    linear_backward(NULL, g->patch_w, g->patch_b, s->dresid, a->tokens, p->patch_w, d.NL, d.P, D);
    silu_backward(s->dc, s->dc_silu, a->c, ND);
    if (m->cfg.classes > 0) label_embed_backward(g->y_embed, s->dc, a->labels, N, D);
    linear_backward(s->dt_hs, g->t_fc2_w, g->t_fc2_b, s->dc, a->t_hs, p->t_fc2_w, N, D, D);
    silu_backward(s->dt_h, s->dt_hs, a->t_h, ND);
    linear_backward(NULL, g->t_fc1_w, g->t_fc1_b, s->dt_h, a->temb, p->t_fc1_w, N, d.F, D);
}

// Every backward function adds its gradient into its output (layers.h), so
// each buffer it adds into must start at zero: here, the one place where
// they are cleared. The final layer's and the embedding's buffers are used
// once per pass (dresid and dc_silu gather sums across all the blocks); the
// blocks share one set of buffers, which would otherwise still hold the
// gradients of the block after them.
// At the default size that is about 120 MB a step, split over the threads:
// on one thread, with the other waiting, it showed in perf as a serial pass
// of its own.
#define CLEAR_CHUNK 65536   // floats per task
static void clear(float *x, size_t n) {
    long chunks = (long)((n + CLEAR_CHUNK - 1) / CLEAR_CHUNK);
    #pragma omp parallel for schedule(static) if (n > OMP_MIN_FLOATS)
    for (long k = 0; k < chunks; k++) {
        size_t i = (size_t)k * CLEAR_CHUNK;
        memset(x + i, 0, (n - i < CLEAR_CHUNK ? n - i : CLEAR_CHUNK) * sizeof(float));
    }
}

void model_zero_grad(Model *m) {
    clear(m->grads, m->n_params);
}

void model_backward(Model *m, Activations *a, BackwardScratch *s, const float *dv) {
    Dims d = dims_of(&m->cfg, a->N);
    clear(s->per_pass, s->per_pass_floats);
    final_layer_backward(m, a, s, d, dv);
    // the blocks, last to first. s->dresid holds dL/d(residual stream).
    for (int b = m->cfg.depth - 1; b >= 0; b--) {
        clear(s->per_block, s->per_block_floats);
        block_backward(m, a, s, b);
    }
    embed_backward(m, a, s, d);
}
