// model.h: the TinyDiT model: its parameters (named as in a PyTorch
// state_dict), the activations of one forward pass, and forward/backward.
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "layers.h"

#define PARAM_NAME_LEN 48

// What a tensor is: a Linear's weight or bias, a norm's gain, a position
// table, a table of class labels' rows (nn.Embedding).
typedef enum { PARAM_LINEAR, PARAM_LINEAR_BIAS, PARAM_GAIN, PARAM_POSITION, PARAM_EMBEDDING } ParamKind;

// How a tensor starts (model_init_weights), said by the parameter table in
// params.c, row by row.
typedef enum {
    INIT_FAN_IN,    // uniform in ±1/√fan_in, PyTorch's nn.Linear default (weight and bias)
    INIT_NORMAL,    // normal, std 0.02 (the position tables, the label table)
    INIT_ONE,       // 1 (a norm's gain: the identity)
    INIT_ZERO,      // 0
    INIT_ZERO_IF_ADA_ZERO,  // the conditioning layers: 0 with ada=zero (adaLN-Zero), else
                            // INIT_FAN_IN; the table's rows only, build_table resolves it
} ParamInit;

// One named parameter tensor: a slice [offset, offset+size) of the flat
// arrays, listed by build_table in params.c from its table of parameters.
typedef struct {
    char name[PARAM_NAME_LEN];
    ParamKind kind;
    ParamInit init;
    int ndim;
    int shape[2];
    size_t offset, size;
    int block;     // its block, or -1 for the top level
    size_t view;   // byte offset of its float * field in ParamViews (block -1) or BlockParams
} ParamTensor;

// Pointers into the flat parameter array (or the gradient array: same layout).
typedef struct {
    float *qkv_w, *qkv_b, *proj_w, *proj_b, *q_norm, *k_norm;
    float *fc1_w, *fc1_b, *fc2_w, *fc2_b;           // gelu
    float *w1_w, *w1_b, *w2_w, *w2_b, *w3_w, *w3_b; // swiglu
    float *ada_w, *ada_b;
} BlockParams;

typedef struct {
    float *patch_w, *patch_b, *pos_row, *pos_col;
    float *t_fc1_w, *t_fc1_b, *t_fc2_w, *t_fc2_b;
    float *y_embed;        // (classes + 1, D) with classes > 0: a row per label, the last the null label
    BlockParams *blocks;   // (depth)
    float *ada_f_w, *ada_f_b, *head_w, *head_b;
} ParamViews;

// Activations of one forward pass at a fixed batch size N, sized once.
// L tokens, D width, hidden the MLP's hidden width, P = C·p·p values per patch.
// Each block has two halves, attention (1) and MLP (2), and each half starts
// the same way: norm the residual stream, then modulate it with the shift and
// scale that the block's ada Linear made from the condition c.
typedef struct {
    int N;
    float *mem; size_t floats;
    float *tokens;      // (N, L, P)  patchified input
    float *temb;        // (N, F)     sinusoidal features of t
    float *t_h, *t_hs;  // (N, D)     t_fc1 output and its SiLU
    float *c, *c_silu;  // (N, D)     condition and SiLU(c), which every ada reads
    int *labels;        // (N)        classes > 0: each image's label, 0..classes (classes: the null label)
    float *resid;       // (2·depth + 1, N, L, D) residual stream at each norm's input
    // per block (arrays of depth pointers):
    float **ada;        // (N, 4D)    shift_a, scale_a, shift_m, scale_m
                        // (N, 6D)    ada=zero: shift_a, scale_a, gate_a, shift_m, scale_m, gate_m
    float **norm1_mean; // (N·L)      the block input's row means (LayerNorm only; RMSNorm has none)
    float **norm1_rstd; // (N·L)      and 1/spread: 1/std (LayerNorm) or 1/rms (RMSNorm)
    float **mod1;       // (N, L, D)  norm1(x_in) · (1 + scale_a) + shift_a, the attention's input
                        //            (the norm itself is not kept: backward recomputes it)
    float **qkv;        // (N, L, 3D)
    AttentionCache *att;
    float **att_out;    // (N, L, D)  merged heads, before proj
    float **branch_a;   // (N, L, D)  ada=zero: proj's output, before gate_a (NULL when plain)
    float **norm2_mean, **norm2_rstd; // the same for the MLP half
    float **mod2;       // (N, L, D)  norm2(x_mid) · (1 + scale_m) + shift_m, the MLP's input
    float **h_pre;      // (N, L, hidden) MLP hidden pre-activation: fc1 output (gelu) / w1 output (swiglu gate)
    float **h_val;      // (N, L, hidden) w2 output (swiglu value; NULL for gelu)
    float **h_act;      // (N, L, hidden) MLP hidden activation fed to fc2 / w3
    float **branch_m;   // (N, L, D)  ada=zero: the MLP's output, before gate_m (NULL when plain)
    // final layer:
    float *ada_f;       // (N, 2D)    shift_f, scale_f
    float *norm_f_mean, *norm_f_rstd; // (N·L) each
    float *mod_f;       // (N, L, D)  norm_f(x_last) · (1 + scale_f) + shift_f, the head's input
    float *out_tokens;  // (N, L, P)
    float *v;           // (N, C, S, S) predicted velocity
    float *max_logit;   // (depth) largest |attention logit| of the last forward
} Activations;

typedef struct {
    ModelConfig cfg;
    int n_tensors;
    ParamTensor *tensors;    // (n_tensors)
    size_t n_params;
    float *params, *grads;   // (n_params) each
    ParamViews p, g;         // views into params and grads
    float *rope_cos, *rope_sin; // (L, hd) when pos=rope2d
} Model;

// Builds the parameter table for cfg (no weights are drawn). Returns 0, or -1
// with a message if the config is invalid.
int model_build(Model *m, const ModelConfig *cfg, char *err, size_t errlen);
void model_free(Model *m);
// n floats, all 0, the first at a cache line's start (64 bytes), as every
// buffer of the model and its training and every tensor read from a file: a
// vector load that straddles two lines costs more. At least one line, so
// that n = 0 still gives a pointer to free; NULL when out of memory.
static inline float *zeroed_floats(size_t n) {
    size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    if (bytes == 0) bytes = 64;
    float *p = aligned_alloc(64, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}
// Initialisation from the given seed, each tensor as the table's init says
// (PyTorch-like, not bit-identical).
void model_init_weights(Model *m, unsigned long long seed);
const ParamTensor *model_find(const Model *m, const char *name);
size_t model_count_params(const ModelConfig *cfg);  // without allocating weights

// A block's ada output by name: per image one row of `stride` floats,
// [shift_a | scale_a | shift_m | scale_m], each D wide (a for the attention
// half, m for the MLP half); with ada=zero the row is six chunks,
// [shift_a | scale_a | gate_a | shift_m | scale_m | gate_m].
typedef struct {
    float *shift_a, *scale_a, *gate_a;   // (N, D) each, rows `stride` apart
    float *shift_m, *scale_m, *gate_m;   // gate_a, gate_m: NULL when plain
    int stride;
} AdaChunks;
AdaChunks ada_chunks(const ModelConfig *c, float *ada);

// Activations for batch N. keep_probs: attention's softmax probabilities
// kept (a->att[b].att) for a reader of the maps; a training step computes
// them again in the backward and needs none.
int activations_alloc(Activations *a, const Model *m, int N, bool keep_probs);
void activations_free(Activations *a);

// v = model(x, t, y). x (N, C, S, S), t (N), y (N) the labels, each in
// 0..classes (classes: the null label), kept in a->labels for the backward;
// y NULL gives every image the null label. An unconditional model
// (classes = 0) reads no labels. Result in a->v.
void model_forward(Model *m, Activations *a, const float *x, const float *t, const int *y);

// Backward from dv (N, C, S, S) = dLoss/dv. Accumulates into m->grads (zero
// them first with model_zero_grad). The gradient buffers are sized once, one
// per tensor of the forward pass it is the gradient of (d<name> = dL/d<name>);
// the blocks, run last to first, reuse them.
typedef struct {
    float *mem; size_t floats;
    // the buffers model_backward clears: the final layer's and the
    // embedding's once per pass, the blocks' before each block (but those
    // the call that writes each first starts: CLEAR_DINP)
    float *per_pass; size_t per_pass_floats;
    float *per_block; size_t per_block_floats;
    float *dout_tokens;               // (N, L, P)   from dv, through unpatchify
    float *dmod_f;                    // (N, L, D)   final layer
    float *dada_f;                    // (N, 2D)
    float *dresid;                    // (N, L, D)   the residual stream, carried down the blocks
    float *dh_act, *dh_pre, *dh_val;  // (N, L, hidden) MLP hidden (dh_val: swiglu only)
    float *dmod2;                     // (N, L, D)   MLP half
    float *dbranch_m, *dbranch_a;     // (N, L, D)   ada=zero: each half's output, before its gate
    float *datt_out;                  // (N, L, D)
    float *dqkv;                      // (N, L, 3D)
    float *dmod1;                     // (N, L, D)   attention half
    float *dada;                      // (N, 4D), ada=zero (N, 6D)
    float *dc_silu, *dc, *dt_hs, *dt_h; // (N, D)    the condition, back to t_fc1 (and y_embed)
    float *att_scratch;               // attention_backward_scratch_floats
} BackwardScratch;
int backward_scratch_alloc(BackwardScratch *s, const Model *m, int N);
void backward_scratch_free(BackwardScratch *s);
void model_zero_grad(Model *m);
void model_backward(Model *m, Activations *a, BackwardScratch *s, const float *dv);
// One block's backward pass, block b, the step model_backward runs once per
// block, last to first: on entry s->dresid = dL/d(the block's output), on
// exit dL/d(its input); it adds into the block's parameter gradients and its
// ada Linear's share into s->dc_silu. s->per_block must be zero on entry
// (model_backward clears it); dmod2, datt_out, dqkv and dmod1 it starts itself.
// An exercise (docs/exercises.md#block_backward).
void block_backward(Model *m, Activations *a, BackwardScratch *s, int b);

// Prints the model as a tree, like PyTorch's print(model), ending "params: N".
void model_print_summary(const Model *m, FILE *f);
