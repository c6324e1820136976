// run_config.c: the run's keys, the tutorial's run as their defaults, and
// the check of a run's settings (see run_config.h; the row format and what
// each column means: nn/config.h).
#include "run_config.h"

#include <string.h>

// The keys of the run and of its samples, one row each, in the format of
// the model's (ConfigKey, nn/config.h). The model's rows are MODEL_KEYS, in
// nn/config.c, where model_config_check reads them (nn/ may include nothing
// of io/). A new key is one row here or there, plus the code that uses it.
_Static_assert(sizeof(TimeDist) == sizeof(int) && sizeof(SamplerKind) == sizeof(int), "enums are read and written as int");
#define R(field) offsetof(RunConfig, field)
const ConfigKey RUN_KEYS[] = {
    // key           part           type       field            default bounds or names resume           two runs that differ in it are
    {"seed",         PART_RUN,      KEY_U64,   R(seed),         0,      ANY_VALUE,      FROM_CHECKPOINT, SEED_PAIR,
     "random seed of the run"},
    {"data_seed",    PART_RUN,      KEY_INT,   R(data_seed),    -1,     AT_LEAST(-1),   FROM_CHECKPOINT, SEED_PAIR,
     "seed of the data order and flips alone, -1 = the run's seed"},
    {"lr",           PART_RUN,      KEY_FLOAT, R(lr),           3e-4,   ABOVE(0),       FROM_CHECKPOINT, NEW_CONFIG,
     "AdamW learning rate"},
    {"weight_decay", PART_RUN,      KEY_FLOAT, R(weight_decay), 0,      AT_LEAST(0),    FROM_CHECKPOINT, NEW_CONFIG,
     "AdamW weight decay of 2-D tensors"},
    {"batch",        PART_RUN,      KEY_INT,   R(batch),        128,    AT_LEAST(1),    FROM_CHECKPOINT, NEW_CONFIG,
     "images per training step"},
    {"steps",        PART_RUN,      KEY_INT,   R(steps),        4000,   AT_LEAST(0),    FROM_OPTIONS,    NEW_CONFIG,
     "training steps"},
    {"flip",         PART_RUN,      KEY_BOOL,  R(flip),         true,   ANY_VALUE,      FROM_CHECKPOINT, NEW_CONFIG,
     "random horizontal flips of training images"},
    {"label_drop",   PART_RUN,      KEY_FLOAT, R(label_drop),   0.1,    IN(0, 1),       FROM_CHECKPOINT, NEW_CONFIG,
     "classes > 0: probability that a training label becomes the null label"},
    {"t_dist",       PART_RUN,      KEY_ENUM,  R(t_dist),       T_UNIFORM, NAMES(T_DIST_NAMES), FROM_CHECKPOINT, NEW_CONFIG,
     "training times: uniform, or logit_normal sigmoid(t_mean + t_std*u)"},
    {"t_mean",       PART_RUN,      KEY_FLOAT, R(t_mean),       0,      IN(-10, 10),    FROM_CHECKPOINT, NEW_CONFIG,
     "t_dist=logit_normal: the location m of sigmoid(m + s*u)"},
    {"t_std",        PART_RUN,      KEY_FLOAT, R(t_std),        1,      ABOVE(0),       FROM_CHECKPOINT, NEW_CONFIG,
     "t_dist=logit_normal: the scale s > 0 of sigmoid(m + s*u)"},
    {"ema",          PART_RUN,      KEY_FLOAT, R(ema),          0,      IN(0, 0.28),    FROM_CHECKPOINT, NEW_CONFIG,
     "sigma_rel of the power-function EMA of the weights (0.10 usual), 0 = none"},
    {"threads",      PART_RUN,      KEY_INT,   R(threads),      0,      AT_LEAST(0),    FROM_OPTIONS,    SAME_RUN,
     "OpenMP/BLAS threads, 0 = all cores"},
    {"val_every",    PART_RUN,      KEY_INT,   R(val_every),    0,      AT_LEAST(0),    FROM_OPTIONS,    SAME_RUN,
     "steps between val MSE checks while training, 0 = only at the end"},
    {"guidance",     PART_SAMPLING, KEY_FLOAT, R(guidance),     1,      AT_LEAST(0),    FROM_OPTIONS,    NEW_CONFIG,
     "classes > 0: classifier-free guidance scale of the samples, 1 = none"},
    {"sampler",      PART_SAMPLING, KEY_ENUM,  R(sampler),      SAMPLER_EULER, NAMES(SAMPLER_NAMES), FROM_OPTIONS, NEW_CONFIG,
     "the samples' sampler: euler (one model evaluation a step) or heun (two)"},
    {"sample_steps", PART_SAMPLING, KEY_INT,   R(sample_steps), 20,     AT_LEAST(1),    FROM_OPTIONS,    NEW_CONFIG,
     "the sampler's steps for the samples and probe-FD"},
    {NULL},
};
#undef R

RunConfig run_config_default(void) {
    RunConfig r;
    memset(&r, 0, sizeof r);   // no stray padding bytes: configs compare with memcmp in tests
    config_keys_default(RUN_KEYS, &r);
    return r;
}

unsigned long long run_data_seed(const RunConfig *r) {
    return r->data_seed < 0 ? r->seed : (unsigned long long)r->data_seed;
}

int run_config_check(const RunConfig *r, char *err, size_t errlen) {
    return config_keys_check(RUN_KEYS, r, err, errlen);
}
