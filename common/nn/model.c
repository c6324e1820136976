// model.c: TinyDiT's passes. First a block, forward then backward, then
// the whole model's forward and backward: the embedding, the blocks, the
// final layer. The layers they call: layers.c and attention.c; the
// parameters and the buffers of a pass: params.c.
#include <stddef.h>
#include <string.h>
#include "matmul.h"
#include "model.h"

// The sizes every pass uses, from the config and the batch size.
typedef struct {
    int N, C, S, patch, grid;   // images, channels, image side, patch side, S/patch
    int L, D, P, F, hidden, NL; // tokens, width, patch values, freq features, MLP hidden width, N·L
    size_t NLD, NL_hidden;      // N·L·D, N·L·hidden
} Dims;

static Dims dims_of(const ModelConfig *c, int N) {
    Dims d;
    d.N = N; d.C = c->channels; d.S = c->img; d.patch = c->patch; d.grid = cfg_grid(c);
    d.L = cfg_tokens(c); d.D = c->dim; d.P = cfg_patch_dim(c); d.F = c->freq_dim;
    d.hidden = cfg_mlp_hidden(c); d.NL = N * d.L;
    d.NLD = (size_t)d.NL * d.D; d.NL_hidden = (size_t)d.NL * d.hidden;
    return d;
}

// The block norm, LayerNorm or RMSNorm by the config, then the adaLN
// modulation, in one pass (layers.c).
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

// The end of a block half: x_next = x + branch, or with ada=zero
// x + gate · branch. Plain, the half's last layer wrote its branch into
// x_next itself; gated, into its own buffer, which the backward needs.
static void residual_add(const ModelConfig *c, float *x_next, const float *x, const float *branch,
                         const float *gate, Dims d, int stride) {
    if (c->ada == ADA_ZERO) gate_residual_forward(x_next, x, branch, gate, d.N, d.L, d.D, stride);
    else add_inplace(x_next, x, d.NLD);
}

// The gradient of a block half's branch: dL/dx_next itself (plain), or with
// ada=zero gate · dL/dx_next, into dbranch, while the gate gets its share.
// Either way x's gradient is dL/dx_next, which dresid already holds.
// (`unused`: its one caller, block_backward, is a stub in a workbook.)
__attribute__((unused))
static const float *residual_back(const ModelConfig *c, float *dbranch, float *dgate,
                                  const float *dx_next, const float *branch, const float *gate,
                                  Dims d, int stride) {
    if (c->ada != ADA_ZERO) return dx_next;
    gate_residual_backward(dbranch, dgate, dx_next, branch, gate, d.N, d.L, d.D, stride);
    return dbranch;
}

// A block's ada output by name (model.h): the one place that knows its
// layout. The same view names the activation a->ada[b] and its gradient s->dada.
AdaChunks ada_chunks(const ModelConfig *c, float *ada) {
    int D = c->dim;
    if (c->ada == ADA_ZERO)
        return (AdaChunks){ ada, ada + D, ada + 2 * D, ada + 3 * D, ada + 4 * D, ada + 5 * D, 6 * D };
    return (AdaChunks){ ada, ada + D, NULL, ada + 2 * D, ada + 3 * D, NULL, 4 * D };
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

// ---------------------------------------------------------------------------
// A block: forward, then backward.

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
    MlpHidden h = { a->h_pre[b], a->h_val[b], a->h_act[b] };                       // (N, L, hidden) each
    if (c->mlp == MLP_SWIGLU)   // step 4
        swiglu_mlp_forward(branch_m, h, a->mod2[b], bp->w1_w, bp->w1_b, bp->w2_w, bp->w2_b, bp->w3_w, bp->w3_b,
                           NL, D, d.hidden);                                       // (N, L, D)
    else gelu_mlp_forward(branch_m, h, a->mod2[b], bp->fc1_w, bp->fc1_b, bp->fc2_w, bp->fc2_b, NL, D, d.hidden);
    residual_add(c, x_out, x_mid, branch_m, ada.gate_m, d, ada.stride);
}

// Block b in reverse (model.h). On entry dresid = dL/dx_out, on exit
// dL/dx_in; along the way the block's ada Linear adds its share to dc_silu.
// dmod2, datt_out, dqkv and dmod1 are started by the call that writes each
// first (CLEAR_DINP); model_backward clears the rest of the block's buffers.
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
    MlpHidden h = { a->h_pre[b], a->h_val[b], a->h_act[b] }, dh = { s->dh_pre, s->dh_val, s->dh_act };
    if (c->mlp == MLP_SWIGLU)
        swiglu_mlp_backward(s->dmod2, bg->w1_w, bg->w1_b, bg->w2_w, bg->w2_b, bg->w3_w, bg->w3_b, dh,
                            dbranch_m, a->mod2[b], h, bp->w1_w, bp->w2_w, bp->w3_w, NL, D, d.hidden,
                            CLEAR_DINP);
    else
        gelu_mlp_backward(s->dmod2, bg->fc1_w, bg->fc1_b, bg->fc2_w, bg->fc2_b, dh, dbranch_m,
                          a->mod2[b], h, bp->fc1_w, bp->fc2_w, NL, D, d.hidden, CLEAR_DINP);
    norm_modulate_back(c, s->dresid, dada.shift_m, dada.scale_m, s->dmod2, x_mid, a->norm2_mean[b],
                       a->norm2_rstd[b], ada.scale_m, N, L, ada.stride);   // now dresid = dL/dx_mid
    // attention half. x_mid = x_in + [gate_a ·] proj(attn(mod1))
    const float *dbranch_a = residual_back(c, s->dbranch_a, dada.gate_a, s->dresid, a->branch_a[b],
                                           ada.gate_a, d, ada.stride);            // (N, L, D)
    linear_backward(s->datt_out, bg->proj_w, bg->proj_b, dbranch_a, a->att_out[b], bp->proj_w, NL, D, D,
                    CLEAR_DINP);
    AttentionUpgrades up = attention_upgrades(m, bp);                              // qk_norm, rope2d
    attention_backward(s->dqkv, bg->q_norm, bg->k_norm, s->datt_out, &a->att[b], s->att_scratch,
                       up.q_gain, up.k_gain, up.rope_cos, up.rope_sin, N, L, D, c->heads, CLEAR_DINP);
    linear_backward(s->dmod1, bg->qkv_w, bg->qkv_b, s->dqkv, a->mod1[b], bp->qkv_w, NL, D, 3 * D,
                    CLEAR_DINP);
    norm_modulate_back(c, s->dresid, dada.shift_a, dada.scale_a, s->dmod1, x_in, a->norm1_mean[b],
                       a->norm1_rstd[b], ada.scale_a, N, L, ada.stride);   // now dresid = dL/dx_in
    // this block's shift, scale (and gates) came from c through its ada Linear
    linear_backward(s->dc_silu, bg->ada_w, bg->ada_b, s->dada, a->c_silu, bp->ada_w, N, D, ada.stride,
                    ADD_TO_DINP);
    // EXERCISE end
}

// ---------------------------------------------------------------------------
// The model's forward: embed, the blocks, the final layer.

// Class-conditional: c += y_embed[y], each image's label's row (no labels:
// the null label's), the labels kept for the backward.
static void label_forward(const Model *m, Activations *a, Dims d, const int *y) {
    for (int n = 0; n < d.N; n++) a->labels[n] = y ? y[n] : cfg_null_label(&m->cfg);  // (N)
    label_embed_forward(a->c, m->p.y_embed, a->labels, d.N, d.D);                      // (N, D)
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
// The model's backward: the same pieces in reverse order, each gradient into
// its own buffer (params.c carves them like the activations).

// The final layer in reverse, from dv: head, modulation, norm. Starts
// dresid = dL/d(last residual stream) and dc_silu with ada_f's share.
static void final_layer_backward(Model *m, Activations *a, BackwardScratch *s, Dims d,
                                 const float *dv) {
    const ParamViews *p = &m->p, *g = &m->g;
    int N = d.N, L = d.L, D = d.D, NL = d.NL;
    // unpatchify only moved numbers around: its backward is patchify
    patchify(s->dout_tokens, dv, N, d.C, d.S, d.patch);                           // (N, L, P)
    linear_backward(s->dmod_f, g->head_w, g->head_b, s->dout_tokens, a->mod_f, p->head_w, NL, D, d.P, ADD_TO_DINP);
    const float *scale_f = a->ada_f + D;                                          // (N, D), rows 2D apart
    float *dshift_f = s->dada_f, *dscale_f = s->dada_f + D;
    norm_modulate_back(&m->cfg, s->dresid, dshift_f, dscale_f, s->dmod_f,
                       a->resid + 2 * (size_t)m->cfg.depth * d.NLD, a->norm_f_mean, a->norm_f_rstd,
                       scale_f, N, L, 2 * D);
    linear_backward(s->dc_silu, g->ada_f_w, g->ada_f_b, s->dada_f, a->c_silu, p->ada_f_w, N, D, 2 * D,
                    ADD_TO_DINP);
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
    linear_backward(NULL, g->patch_w, g->patch_b, s->dresid, a->tokens, p->patch_w, d.NL, d.P, D, ADD_TO_DINP);
    silu_backward(s->dc, s->dc_silu, a->c, ND);
    if (m->cfg.classes > 0) label_embed_backward(g->y_embed, s->dc, a->labels, N, D);
    linear_backward(s->dt_hs, g->t_fc2_w, g->t_fc2_b, s->dc, a->t_hs, p->t_fc2_w, N, D, D, ADD_TO_DINP);
    silu_backward(s->dt_h, s->dt_hs, a->t_h, ND);
    linear_backward(NULL, g->t_fc1_w, g->t_fc1_b, s->dt_h, a->temb, p->t_fc1_w, N, d.F, D, ADD_TO_DINP);
}

// Every layer's backward adds its gradient into its output (layers.h), so
// each buffer it adds into must start at zero. They are cleared here: the
// final layer's and the embedding's once per pass (dresid and dc_silu gather
// sums across all the blocks), and before each block those of the block's
// that its calls only add into (dada; with ada=zero the branches'
// gradients), which would otherwise still hold the block after's. dmod2,
// datt_out, dqkv and dmod1 are started by the call that writes each first
// (CLEAR_DINP, layers.h), and the MLP starts its own hidden gradients.
void model_backward(Model *m, Activations *a, BackwardScratch *s, const float *dv) {
    Dims d = dims_of(&m->cfg, a->N);
    parallel_clear(s->per_pass, s->per_pass_floats);
    final_layer_backward(m, a, s, d, dv);
    // the blocks, last to first. s->dresid holds dL/d(residual stream).
    for (int b = m->cfg.depth - 1; b >= 0; b--) {
        parallel_clear(s->per_block, s->per_block_floats);
        block_backward(m, a, s, b);
    }
    embed_backward(m, a, s, d);
}
