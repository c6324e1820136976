// params.c: the model's bookkeeping: the parameter table (names as in
// PyTorch's state_dict), building and initialising the model, and the
// buffers of one pass, the activations and the backward's gradients, each
// carved out of one allocation. model.c runs the passes over them.
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "matmul.h"
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
    case LABELS:       return cfg_null_label(c) + 1;           // the classes and the null label
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
    m->params = zeroed_floats(m->n_params);
    m->grads = zeroed_floats(m->n_params);
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
#define LINE_FLOATS 16   // a 64-byte cache line
static float *take(Arena *a, size_t n) {
    float *p = a->base ? a->base + a->used : NULL;
    a->used += (n + LINE_FLOATS - 1) / LINE_FLOATS * LINE_FLOATS;
    return p;
}

static void carve_activations(Activations *a, const Model *m, Arena *ar, bool keep_probs) {
    const ModelConfig *c = &m->cfg;
    size_t N = a->N, L = cfg_tokens(c), D = c->dim, P = cfg_patch_dim(c), F = c->freq_dim;
    size_t hidden = cfg_mlp_hidden(c), NL = N * L;
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
        a->h_pre[b] = take(ar, NL * hidden);
        a->h_val[b] = swiglu ? take(ar, NL * hidden) : NULL;
        a->h_act[b] = take(ar, NL * hidden);
        a->branch_m[b] = gated ? take(ar, NL * D) : NULL;
    }
    a->ada_f = take(ar, N * 2 * D);
    a->norm_f_mean = take(ar, NL); a->norm_f_rstd = take(ar, NL);
    a->mod_f = take(ar, NL * D);
    a->out_tokens = take(ar, NL * P);
    a->v = take(ar, N * cfg_image_floats(c));
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
    a->mem = zeroed_floats(a->floats);
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

// The backward's gradient buffers, carved like the activations.
static void carve_scratch(BackwardScratch *s, const Model *m, int N, Arena *ar) {
    const ModelConfig *c = &m->cfg;
    size_t L = cfg_tokens(c), D = c->dim, NL = (size_t)N * L, ND = (size_t)N * D;
    size_t NLD = NL * D, NL_hidden = NL * cfg_mlp_hidden(c);
    s->dout_tokens = take(ar, NL * cfg_patch_dim(c));   // written whole by patchify
    s->att_scratch = take(ar, attention_backward_scratch_floats(N, L, D, c->heads));
    // The rest is accumulated into (every backward adds, see layers.h), so
    // most of it is carved in two runs that model_backward clears: once per pass ...
    size_t start = ar->used;
    s->per_pass = take(ar, 0);
    s->dmod_f = take(ar, NLD);
    s->dada_f = take(ar, 2 * ND);
    s->dresid = take(ar, NLD);
    s->dc_silu = take(ar, ND); s->dc = take(ar, ND);
    s->dt_hs = take(ar, ND); s->dt_h = take(ar, ND);
    s->per_pass_floats = ar->used - start;
    // ... and before each block
    start = ar->used;
    s->per_block = take(ar, 0);
    s->dbranch_m = c->ada == ADA_ZERO ? take(ar, NLD) : NULL;
    s->dbranch_a = c->ada == ADA_ZERO ? take(ar, NLD) : NULL;
    s->dada = take(ar, (size_t)cfg_ada_chunks(c) * ND);
    s->per_block_floats = ar->used - start;
    // Not cleared here: the block's input gradients of its Linears and
    // attention, started by the call that writes each first (CLEAR_DINP,
    // layers.h), and the MLP's hidden gradients, which the MLP starts itself.
    s->dmod2 = take(ar, NLD);
    s->datt_out = take(ar, NLD);
    s->dqkv = take(ar, 3 * NLD);
    s->dmod1 = take(ar, NLD);
    s->dh_act = take(ar, NL_hidden); s->dh_pre = take(ar, NL_hidden);
    s->dh_val = c->mlp == MLP_SWIGLU ? take(ar, NL_hidden) : NULL;
}

int backward_scratch_alloc(BackwardScratch *s, const Model *m, int N) {
    memset(s, 0, sizeof *s);
    Arena ar = { NULL, 0 };
    carve_scratch(s, m, N, &ar);           // first pass: count
    s->floats = ar.used;
    s->mem = zeroed_floats(s->floats);
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
    parallel_clear(m->grads, m->n_params);
}
