// config.h: every knob of the TinyDiT model, the sizes derived from them,
// and the checks that those sizes fit together. The model knows nothing of
// how it is trained: the run's settings (seed, lr, batch, steps, threads,
// ...) are a RunConfig, io/run_config.h. The `--set key=value` parser that
// fills both from a command line is plumbing and lives in io/config_parse.h.
#pragma once
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

// The most blocks a model may have: the depth key's bound (MODEL_KEYS, in
// config.c), and so the size of everything a model keeps per block (its
// table of tensors, model.h; a run's largest attention logit of each block).
#define TINYDIT_MAX_DEPTH 64

// The most class labels a class-conditional model may have (ImageNet's
// thousand); its label table has one row more, the null label.
#define TINYDIT_MAX_CLASSES 1000

typedef enum { NORM_LAYERNORM = 0, NORM_RMSNORM = 1 } NormKind;
typedef enum { MLP_GELU = 0, MLP_SWIGLU = 1 } MlpKind;
typedef enum { POS_LEARNED = 0, POS_ROPE2D = 1 } PosKind;
typedef enum { ADA_PLAIN = 0, ADA_ZERO = 1 } AdaKind;
// Each enum's names, indexed by its values, as `--set` reads and prints them.
extern const char *const NORM_NAMES[], *const MLP_NAMES[], *const POS_NAMES[], *const ADA_NAMES[];

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
// The floats of one image, C·S·S: what a batch of N images holds N of.
static inline size_t cfg_image_floats(const ModelConfig *c) { return (size_t)c->channels * c->img * c->img; }
// The null label, the label table's last row: "no class" (classes > 0).
static inline int cfg_null_label(const ModelConfig *c) { return c->classes; }
// GELU: int(mlp_ratio * D). SwiGLU: int(2 * mlp_ratio * D / 3) so that its
// three matrices hold about as many weights as GELU's two, then rounded up to
// a multiple of mlp_multiple_of (hardware-friendly widths, e.g. 64).
// Computed in double, like the Python reference, so that 2*4*384/3 is exactly
// 1024 and not 1023.9999.
static inline int cfg_mlp_hidden(const ModelConfig *c) {
    if (c->mlp == MLP_SWIGLU) {
        int h = (int)(2.0 * (double)c->mlp_ratio * c->dim / 3.0);
        int m = c->mlp_multiple_of;
        // In long long: h + m - 1 overflows an int when m is near INT_MAX
        // (fuzz/regressions/config/); model_config_check refuses what is too big.
        if (m > 1) {
            long long r = (long long)m * (((long long)h + m - 1) / m);
            h = r > INT_MAX ? INT_MAX : (int)r;
        }
        return h;
    }
    return (int)((double)c->mlp_ratio * c->dim);
}
// How many D-wide chunks a block's ada Linear gives: shift and scale for each
// half (4), and with ada=zero a gate for each half too (6).
static inline int cfg_ada_chunks(const ModelConfig *c) { return c->ada == ADA_ZERO ? 6 : 4; }

ModelConfig model_config_default(void);   // the tutorial's model: 32x32x3, patch 4, D 128, 4 blocks, 4 heads

// The one check of a model's config: each field alone against its row of
// MODEL_KEYS (a ModelConfig may be filled in by hand, not by the parser),
// then that the sizes fit together (dim divisible by heads, img by patch,
// head_dim divisible by 4 for rope2d, nothing that overflows an int). 0 if
// fine, -1 with a message in err. model_build calls it; so does
// config_validate (io/config_parse.h).
int model_config_check(const ModelConfig *c, char *err, size_t errlen);

// ---------------------------------------------------------------------------
// Config keys: everything about one setting in one row. A ModelConfig's
// fields are the rows of MODEL_KEYS (config.c), a RunConfig's the rows of
// RUN_KEYS (io/run_config.c), in the same format, so that the model's
// check here and the `--set` parser (io/config_parse.c) read the same
// bounds and names, and nn/ includes nothing of io/.

typedef enum { KEY_INT, KEY_U64, KEY_FLOAT, KEY_BOOL, KEY_ENUM } KeyType;
// What the key is a setting of: the model, the run that trains it, or the
// drawing of the run's samples.
typedef enum { PART_MODEL, PART_RUN, PART_SAMPLING } KeyPart;
// Where a resume (train --resume) takes the value from.
typedef enum { FROM_CHECKPOINT, FROM_OPTIONS } KeyResume;
// What two runs that differ in this key alone are: runs of two configs,
// two draws of one config (a seed pair), or one run (computed on other
// cores, or watched more often).
typedef enum { NEW_CONFIG, SEED_PAIR, SAME_RUN } KeyDiffers;

typedef struct {
    const char *key;
    KeyPart part;
    KeyType type;
    size_t offset;              // of the field in its struct (ModelConfig, or RunConfig)
    double def;                 // the default
    double min, max;            // KEY_INT, KEY_FLOAT: the bounds, both allowed (but min when above_min)
    bool above_min;             // min itself is refused (lr > 0)
    const char *const *names;   // KEY_ENUM: the names, indexed by value, NULL-terminated
    KeyResume resume;
    KeyDiffers differs;
    const char *help;
} ConfigKey;

// A row's "bounds or names": AT_LEAST(1), ABOVE(0), IN(0, 1), NAMES(NORM_NAMES)
// (an enum), or ANY_VALUE (a bool; a seed, any 64-bit value).
#define AT_LEAST(lo) (lo), INFINITY, false, NULL
#define ABOVE(lo) (lo), INFINITY, true, NULL
#define IN(lo, hi) (lo), (hi), false, NULL
#define NAMES(names) 0, 0, false, (names)
#define ANY_VALUE 0, 0, false, NULL

extern const ConfigKey MODEL_KEYS[];   // every field of ModelConfig; ends with a row whose key is NULL

// Each row's default into the struct at base (a ModelConfig for MODEL_KEYS).
void config_keys_default(const ConfigKey *keys, void *base);
// The field of row k in the struct at base against the row's bounds or
// names: 0, or -1 with "key=value: must be ..." in err. config_keys_check:
// every row of keys.
int config_key_check(const ConfigKey *k, const void *base, char *err, size_t errlen);
int config_keys_check(const ConfigKey *keys, const void *base, char *err, size_t errlen);
// What a row allows, for messages and the key list: "an integer >= 1",
// "a finite number > 0", "layernorm | rmsnorm", ...
void config_key_allowed(const ConfigKey *k, char *out, size_t outlen);
