// config_parse.h: the `--set key=value` parser that every program shares,
// and the printing of a config (checkpoint metadata, --set help). A key is
// one row of the model's table (MODEL_KEYS, nn/config.h) or the run's
// (RUN_KEYS, run_config.h); config_set fills either, config_validate checks
// both, once, after the last key.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "nn/config.h"
#include "run_config.h"

// Everything a training program is told: the model and its run.
typedef struct {
    ModelConfig model;
    RunConfig run;
} Config;

Config config_default(void);   // the tutorial's model and run

// Applies one "key=value" (or the shorthand "modern") to the model or the
// run. 0, or -1 with a message naming the key and what it allows. Each value
// is checked alone here; how the values fit together is config_validate's.
int config_set(Config *c, const char *key_eq_value, char *err, size_t errlen);

// The shortest decimal that reads back (strtof) as v: "3e-4", "0.1", "4"
// (how every float of a config is printed and saved).
void format_float_shortest(float v, char *out, size_t outlen);

// The one check of a whole config, after its last config_set: the model's
// (dim divisible by heads, img by patch, ...) and the run's.
int config_validate(const Config *c, char *err, size_t errlen);

// Each "key=value" of kvs in order on top of *c, then config_validate: 0, or
// -1 with the message, *c left as it was.
int config_apply(Config *c, const char *const *kvs, int n, char *err, size_t errlen);

// Like config_set, but a failure is reported on stderr and exits 2: for a
// program's own fixed settings.
void config_set_or_exit(Config *c, const char *key_eq_value);

// Prints every key: its value, its help, what it allows, and whether a
// resume takes it from the options.
void config_print_keys(const Config *c, FILE *f);

// The fields as (key, value) pairs, the value as config_set reads it back:
// every field, or one part's.
typedef void (*ConfigFieldFn)(const char *key, const char *value, void *ctx);
void config_foreach_field(const Config *c, ConfigFieldFn fn, void *ctx);
void model_config_foreach_field(const ModelConfig *m, ConfigFieldFn fn, void *ctx);
void run_config_foreach_field(const RunConfig *r, ConfigFieldFn fn, void *ctx);

// The row of a key (its part, type, bounds, ...), or NULL when key is none.
const ConfigKey *config_find_key(const char *key);

// A one-line description, e.g. "dim=128 depth=4 heads=4 norm=layernorm ...":
// every field, or the model's alone.
void config_describe(const Config *c, char *out, size_t outlen);
void model_config_describe(const ModelConfig *m, char *out, size_t outlen);

// What a resume runs: each key from the checkpoint or from the options, as
// its row says (FROM_CHECKPOINT: what is computed; FROM_OPTIONS: how far,
// how often it checks, on how many cores, how it draws the samples).
Config config_for_resume(const Config *saved, const Config *given);

// True when a and b agree on every key but the SAME_RUN ones (threads,
// val_every) and, with ignore_seed, the SEED_PAIR ones.
bool configs_agree(const Config *a, const Config *b, bool ignore_seed);
