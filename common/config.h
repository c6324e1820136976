// config.h: every knob of TinyDiT and its training run (spec §2), and the
// `--set key=value` parser that every program shares.
#pragma once
#include <stdbool.h>
#include <stddef.h>

typedef enum { NORM_LAYERNORM = 0, NORM_RMSNORM = 1 } NormKind;
typedef enum { MLP_GELU = 0, MLP_SWIGLU = 1 } MlpKind;
typedef enum { POS_LEARNED = 0, POS_ROPE2D = 1 } PosKind;

typedef struct {
    // --- the model ---
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
    // --- the training run ---
    unsigned long long seed;
    float lr;
    float weight_decay;
    int batch, steps;
    bool flip;
    int threads;                // 0 = all cores
} Config;

// Derived sizes, computed from the fields above.
static inline int cfg_grid(const Config *c) { return c->img / c->patch; }
static inline int cfg_tokens(const Config *c) { return cfg_grid(c) * cfg_grid(c); }
static inline int cfg_head_dim(const Config *c) { return c->dim / c->heads; }
static inline int cfg_patch_dim(const Config *c) { return c->channels * c->patch * c->patch; }
int cfg_mlp_hidden(const Config *c);   // GELU: mlp_ratio*D; SwiGLU: int(2*mlp_ratio*D/3), rounded up

Config config_default(void);

// Applies one "key=value" (or the shorthand "modern" / "modern=true").
// Returns 0 on success; on failure writes a message naming the key and what
// is allowed into err (if not NULL) and returns -1.
int config_set(Config *c, const char *key_eq_value, char *err, size_t errlen);

// Checks that the sizes fit together (dim divisible by heads, img by patch,
// head_dim divisible by 4 for rope2d, ...). 0 if fine, -1 with a message.
int config_validate(const Config *c, char *err, size_t errlen);

// Like config_set, but prints the message and what is allowed, then exits 2.
void config_set_or_exit(Config *c, const char *key_eq_value);

// Prints every key, its current value and its allowed values.
void config_print_keys(const Config *c, void *file /* FILE* */);

// The model fields as (key, value-string) pairs, for a checkpoint's metadata.
// Calls fn once per field. Training fields are included too.
typedef void (*ConfigFieldFn)(const char *key, const char *value, void *ctx);
void config_foreach_field(const Config *c, ConfigFieldFn fn, void *ctx);

// A one-line description, e.g. "dim=128 depth=4 heads=4 norm=layernorm ...".
void config_describe(const Config *c, char *out, size_t outlen);
