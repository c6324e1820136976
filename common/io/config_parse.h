// config_parse.h: the `--set key=value` parser that every program shares,
// and the printing of a Config (checkpoint metadata, --set help). The struct
// itself and its derived sizes are the core's: nn/config.h.
#pragma once
#include <stddef.h>
#include "nn/config.h"
// Applies one "key=value" (or the shorthand "modern" / "modern=true").
// Returns 0 on success; on failure writes a message naming the key and what
// is allowed into err (if not NULL) and returns -1.
int config_set(Config *c, const char *key_eq_value, char *err, size_t errlen);

// The shortest decimal that reads back (strtof) as v: "3e-4", "0.1", "4"
// (how every float of a config is printed and saved).
void format_float_shortest(float v, char *out, size_t outlen);

// Checks that the sizes fit together (dim divisible by heads, img by patch,
// head_dim divisible by 4 for rope2d, ...). 0 if fine, -1 with a message.
int config_validate(const Config *c, char *err, size_t errlen);

// Like config_set, but a failure is reported on stderr (the message, then
// every key and what it allows): 0, or 2 (ARGS_BAD, for an option parser).
int config_set_or_report(Config *c, const char *key_eq_value);

// The same, exiting 2 on a failure: for a program's own fixed settings.
void config_set_or_exit(Config *c, const char *key_eq_value);

// Prints every key, its current value and its allowed values.
void config_print_keys(const Config *c, void *file /* FILE* */);

// The model fields as (key, value-string) pairs, for a checkpoint's metadata.
// Calls fn once per field. Training fields are included too.
typedef void (*ConfigFieldFn)(const char *key, const char *value, void *ctx);
void config_foreach_field(const Config *c, ConfigFieldFn fn, void *ctx);

// A one-line description, e.g. "dim=128 depth=4 heads=4 norm=layernorm ...".
void config_describe(const Config *c, char *out, size_t outlen);
