// config.h: every knob of the TinyDiT model, the sizes derived from them,
// and the checks that those sizes fit together. The model knows nothing of
// how it is trained: the run's settings (seed, lr, batch, steps, threads,
// ...) are a RunConfig, io/run_config.h. The `--set key=value` parser that
// fills both from a command line is plumbing and lives in io/config_parse.h.
#pragma once
#include <stdbool.h>
#include <stddef.h>

// The most blocks a model may have. A run keeps each block's largest
// attention logit in arrays of this size (and in its checkpoint's
// train.max_logit), so model_config_check refuses a deeper model.
#define TINYDIT_MAX_DEPTH 64

// The most class labels a class-conditional model may have (ImageNet's
// thousand); its label table has one row more, the null label.
#define TINYDIT_MAX_CLASSES 1000

typedef enum { NORM_LAYERNORM = 0, NORM_RMSNORM = 1 } NormKind;
typedef enum { MLP_GELU = 0, MLP_SWIGLU = 1 } MlpKind;
typedef enum { POS_LEARNED = 0, POS_ROPE2D = 1 } PosKind;
typedef enum { ADA_PLAIN = 0, ADA_ZERO = 1 } AdaKind;

typedef struct {
    int img, channels, patch;   // image side, colour channels, patch side
    int dim, depth, heads;      // width D, number of blocks, attention heads
    float mlp_ratio;            // GELU hidden = mlp_ratio * D
    int freq_dim;               // sinusoidal timestep features
    NormKind norm;              // layernorm | rmsnorm
    bool qk_norm;               // RMSNorm on q and k, gain shared by heads
    MlpKind mlp;                // gelu | swiglu
    int mlp_multiple_of;        // SwiGLU hidden rounded up to a multiple of this
    PosKind pos;                // learned | rope2d
    float rope_base;            // RoPE frequency base
    bool bias;                  // false drops every Linear bias
    AdaKind ada;                // plain (shift, scale) | zero (adaLN-Zero: gates, zero init)
    int classes;                // 0: unconditional; N: labels 0..N-1, and N the null label
} ModelConfig;

// Derived sizes, computed from the fields above.
static inline int cfg_grid(const ModelConfig *c) { return c->img / c->patch; }
static inline int cfg_tokens(const ModelConfig *c) { return cfg_grid(c) * cfg_grid(c); }
static inline int cfg_head_dim(const ModelConfig *c) { return c->dim / c->heads; }
static inline int cfg_patch_dim(const ModelConfig *c) { return c->channels * c->patch * c->patch; }
int cfg_mlp_hidden(const ModelConfig *c);   // GELU: mlp_ratio*D; SwiGLU: int(2*mlp_ratio*D/3), rounded up
// How many D-wide chunks a block's ada Linear gives: shift and scale for each
// half (4), and with ada=zero a gate for each half too (6).
static inline int cfg_ada_chunks(const ModelConfig *c) { return c->ada == ADA_ZERO ? 6 : 4; }

ModelConfig model_config_default(void);   // the tutorial's model: 32x32x3, patch 4, D 128, 4 blocks, 4 heads

// The one check of a model's config: each field alone (a ModelConfig may be
// filled in by hand, not by the parser), then that the sizes fit together
// (dim divisible by heads, img by patch, head_dim divisible by 4 for rope2d,
// nothing that overflows an int). 0 if fine, -1 with a message in err.
// model_build calls it; so does config_validate (io/config_parse.h).
int model_config_check(const ModelConfig *c, char *err, size_t errlen);
