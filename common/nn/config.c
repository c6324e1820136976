// config.c: the model's keys (their rows, whose defaults are the tutorial's
// model), the SwiGLU hidden width, and the checks: each field against its
// row, then that a model's sizes fit together.
#include "config.h"
#include "errors.h"
#include "flow.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

// ---------------------------------------------------------------------------
// The model's keys, one row each (the columns: ConfigKey in config.h).
//
// A row is everything about its key. The model's rows are here, where
// model_config_check reads them, and the run's in io/run_config.c
// (RUN_KEYS), because nn/ knows nothing of runs; both in one format. The
// `--set` parser, the key list of --set help, checkpoints' metadata,
// metrics.json, what a resume keeps, which runs are seed pairs and the fuzz
// dictionary all walk these rows, so a key is one row plus the code that
// uses its field.

const char *const NORM_NAMES[] = {"layernorm", "rmsnorm", NULL};
const char *const MLP_NAMES[] = {"gelu", "swiglu", NULL};
const char *const POS_NAMES[] = {"learned", "rope2d", NULL};
const char *const ADA_NAMES[] = {"plain", "zero", NULL};
// the run's enums of flow.h (a file with exercises holds no variable: scripts/grade.sh)
const char *const T_DIST_NAMES[] = {"uniform", "logit_normal", NULL};
const char *const SAMPLER_NAMES[] = {"euler", "heun", NULL};

#define M(field) offsetof(ModelConfig, field)
const ConfigKey MODEL_KEYS[] = {
    // key              part        type       field               default         bounds or names           resume           two runs that differ in it are
    {"img",             PART_MODEL, KEY_INT,   M(img),             32,             AT_LEAST(1),              FROM_CHECKPOINT, NEW_CONFIG,
     "image side in pixels"},
    {"channels",        PART_MODEL, KEY_INT,   M(channels),        3,              AT_LEAST(1),              FROM_CHECKPOINT, NEW_CONFIG,
     "colour channels"},
    {"patch",           PART_MODEL, KEY_INT,   M(patch),           4,              AT_LEAST(1),              FROM_CHECKPOINT, NEW_CONFIG,
     "patch side in pixels (img must be a multiple)"},
    {"dim",             PART_MODEL, KEY_INT,   M(dim),             128,            AT_LEAST(1),              FROM_CHECKPOINT, NEW_CONFIG,
     "model width D (a multiple of heads)"},
    {"depth",           PART_MODEL, KEY_INT,   M(depth),           4,              IN(1, TINYDIT_MAX_DEPTH), FROM_CHECKPOINT, NEW_CONFIG,
     "number of transformer blocks"},
    {"heads",           PART_MODEL, KEY_INT,   M(heads),           4,              AT_LEAST(1),              FROM_CHECKPOINT, NEW_CONFIG,
     "attention heads"},
    {"mlp_ratio",       PART_MODEL, KEY_FLOAT, M(mlp_ratio),       4,              ABOVE(0),                 FROM_CHECKPOINT, NEW_CONFIG,
     "MLP hidden width / D"},
    {"freq_dim",        PART_MODEL, KEY_INT,   M(freq_dim),        256,            AT_LEAST(2),              FROM_CHECKPOINT, NEW_CONFIG,
     "sinusoidal timestep features (even)"},
    {"norm",            PART_MODEL, KEY_ENUM,  M(norm),            NORM_LAYERNORM, NAMES(NORM_NAMES),        FROM_CHECKPOINT, NEW_CONFIG,
     "normalisation before attn/mlp"},
    {"qk_norm",         PART_MODEL, KEY_BOOL,  M(qk_norm),         false,          ANY_VALUE,                FROM_CHECKPOINT, NEW_CONFIG,
     "RMSNorm on queries and keys"},
    {"mlp",             PART_MODEL, KEY_ENUM,  M(mlp),             MLP_GELU,       NAMES(MLP_NAMES),         FROM_CHECKPOINT, NEW_CONFIG,
     "feed-forward kind"},
    {"mlp_multiple_of", PART_MODEL, KEY_INT,   M(mlp_multiple_of), 1,              AT_LEAST(1),              FROM_CHECKPOINT, NEW_CONFIG,
     "round SwiGLU hidden up to a multiple of this"},
    {"pos",             PART_MODEL, KEY_ENUM,  M(pos),             POS_LEARNED,    NAMES(POS_NAMES),         FROM_CHECKPOINT, NEW_CONFIG,
     "position encoding"},
    {"rope_base",       PART_MODEL, KEY_FLOAT, M(rope_base),       100,            ABOVE(0),                 FROM_CHECKPOINT, NEW_CONFIG,
     "RoPE frequency base"},
    {"bias",            PART_MODEL, KEY_BOOL,  M(bias),            true,           ANY_VALUE,                FROM_CHECKPOINT, NEW_CONFIG,
     "biases in every Linear layer"},
    {"ada",             PART_MODEL, KEY_ENUM,  M(ada),             ADA_PLAIN,      NAMES(ADA_NAMES),         FROM_CHECKPOINT, NEW_CONFIG,
     "adaLN: plain, or zero (adaLN-Zero: gated halves, zero init)"},
    {"classes",         PART_MODEL, KEY_INT,   M(classes),         0,              IN(0, TINYDIT_MAX_CLASSES), FROM_CHECKPOINT, NEW_CONFIG,
     "class labels, 0 = unconditional; N: labels 0..N-1 and the null label N"},
    {NULL},
};
#undef M

ModelConfig model_config_default(void) {
    ModelConfig c;
    memset(&c, 0, sizeof c);   // no stray padding bytes: configs compare with memcmp in tests
    config_keys_default(MODEL_KEYS, &c);
    return c;
}

// ---------------------------------------------------------------------------
// A row's default, bounds and allowed values, for any struct of fields

// Enums are stored as their C enum type; all four are int-sized (C11 6.7.2.2
// lets the compiler pick, but gcc uses unsigned int / int for these ranges).
_Static_assert(sizeof(NormKind) == sizeof(int) && sizeof(MlpKind) == sizeof(int) &&
               sizeof(PosKind) == sizeof(int) && sizeof(AdaKind) == sizeof(int),
               "enums are read and written as int");

// The field of row k in the struct at base, as a number.
static double key_value(const ConfigKey *k, const void *base) {
    const void *p = (const char *)base + k->offset;
    switch (k->type) {
    case KEY_U64:   return (double)*(const unsigned long long *)p;
    case KEY_FLOAT: return *(const float *)p;
    case KEY_BOOL:  return *(const bool *)p;
    default:        return *(const int *)p;   // KEY_INT, KEY_ENUM
    }
}

void config_keys_default(const ConfigKey *keys, void *base) {
    for (const ConfigKey *k = keys; k->key; k++) {
        void *p = (char *)base + k->offset;
        switch (k->type) {
        case KEY_U64:   *(unsigned long long *)p = (unsigned long long)k->def; break;
        case KEY_FLOAT: *(float *)p = (float)k->def; break;
        case KEY_BOOL:  *(bool *)p = k->def != 0; break;
        default:        *(int *)p = (int)k->def; break;
        }
    }
}

static int count_names(const ConfigKey *k) {
    int n = 0;
    while (k->names[n]) n++;
    return n;
}

static bool in_bounds(const ConfigKey *k, double v) {
    switch (k->type) {
    case KEY_INT:   return v >= k->min && v <= k->max;
    // a float field holds its bounds rounded to float (ema=0.28 is 0.2800000012)
    case KEY_FLOAT: return isfinite(v) && (k->above_min ? v > (float)k->min : v >= (float)k->min) && v <= (float)k->max;
    case KEY_ENUM:  return v >= 0 && v < count_names(k);
    default:        return true;   // KEY_U64, KEY_BOOL: every value is one
    }
}

void config_key_allowed(const ConfigKey *k, char *out, size_t outlen) {
    const char *kind = k->type == KEY_INT ? "an integer" : "a finite number";
    size_t used = 0;
    out[0] = '\0';
    switch (k->type) {
    case KEY_U64:  snprintf(out, outlen, "an integer in [0, 2^64)"); break;
    case KEY_BOOL: snprintf(out, outlen, "true | false | 1 | 0"); break;
    case KEY_ENUM:
        for (int i = 0; k->names[i] && used < outlen; i++)
            used += (size_t)snprintf(out + used, outlen - used, "%s%s", i ? " | " : "", k->names[i]);
        break;
    default:   // KEY_INT, KEY_FLOAT
        if (isinf(k->max)) snprintf(out, outlen, "%s %s %g", kind, k->above_min ? ">" : ">=", k->min);
        else snprintf(out, outlen, "%s in [%g, %g]", kind, k->min, k->max);
    }
}

int config_key_check(const ConfigKey *k, const void *base, char *err, size_t errlen) {
    double v = key_value(k, base);
    if (in_bounds(k, v)) return 0;
    char allowed[128];
    config_key_allowed(k, allowed, sizeof allowed);
    return errorf(err, errlen, k->type == KEY_FLOAT ? "%s=%g: must be %s" : "%s=%.0f: must be %s", k->key, v, allowed);
}

int config_keys_check(const ConfigKey *keys, const void *base, char *err, size_t errlen) {
    for (const ConfigKey *k = keys; k->key; k++)
        if (config_key_check(k, base, err, errlen) != 0) return -1;
    return 0;
}

// ---------------------------------------------------------------------------
// Checks

int model_config_check(const ModelConfig *c, char *err, size_t errlen) {
    // each field alone (a ModelConfig may be filled in by hand, not by the parser)
    if (config_keys_check(MODEL_KEYS, c, err, errlen) != 0) return -1;
    if (c->img % c->patch != 0)
        return errorf(err, errlen, "img=%d is not a multiple of patch=%d", c->img, c->patch);
    if (c->dim % c->heads != 0)
        return errorf(err, errlen, "dim=%d is not a multiple of heads=%d", c->dim, c->heads);
    int hd = cfg_head_dim(c);
    // Rotary and rms pairs work on (2i, 2i+1): an odd head_dim has no partner.
    if (hd % 2 != 0)
        return errorf(err, errlen, "head_dim = dim/heads = %d must be even", hd);
    // 2-D RoPE gives half the pairs to rows and half to columns.
    if (c->pos == POS_ROPE2D && hd % 4 != 0)
        return errorf(err, errlen, "pos=rope2d needs head_dim = dim/heads = %d to be a multiple of 4", hd);
    if (c->freq_dim % 2 != 0)
        return errorf(err, errlen, "freq_dim=%d must be even (cos and sin halves)", c->freq_dim);
    // Guard the products the model allocates with: they must fit in an int.
    // Checked by division, so that the check itself cannot overflow: img *
    // img * channels overflows even a long long for img near 2^31. With
    // img^2 * channels in an int, patch_dim = channels * patch^2 (patch <=
    // img) fits one too.
    if (c->dim > INT_MAX / 6 || c->img > INT_MAX / c->img || c->img * c->img > INT_MAX / c->channels ||
        (long long)cfg_patch_dim(c) * c->dim > INT_MAX)
        return errorf(err, errlen, "sizes too large (dim=%d img=%d channels=%d)", c->dim, c->img, c->channels);
    double hidden = (c->mlp == MLP_SWIGLU ? 2.0 * c->mlp_ratio / 3.0 : c->mlp_ratio) * c->dim;
    if (hidden > INT_MAX / 4)
        return errorf(err, errlen, "mlp hidden width %.0f is too large", hidden);
    if (cfg_mlp_hidden(c) < 1)
        return errorf(err, errlen, "mlp hidden width is %d (mlp_ratio=%g, dim=%d): must be >= 1",
                    cfg_mlp_hidden(c), c->mlp_ratio, c->dim);
    // after SwiGLU's rounding up to a multiple of mlp_multiple_of
    if (cfg_mlp_hidden(c) > INT_MAX / 4 || (long long)cfg_mlp_hidden(c) * c->dim > INT_MAX)
        return errorf(err, errlen, "mlp hidden width %d (mlp_multiple_of=%d) is too large for dim=%d",
                    cfg_mlp_hidden(c), c->mlp_multiple_of, c->dim);
    return 0;
}
