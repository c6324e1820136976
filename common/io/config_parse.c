// config_parse.c: the `--set key=value` parser and the printing of a Config.
// Parsing, printing, checkpoint metadata, what a resume takes and what two
// runs may differ in all walk the rows of MODEL_KEYS (nn/config.c) and
// RUN_KEYS (run_config.c), so a key cannot be settable but forgotten in
// checkpoints, nor bounded here and otherwise in its part's check.
#include "config_parse.h"
#include "args.h"
#include "nn/errors.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------
// The keys: the model's, then the run's

static const ConfigKey *const TABLES[] = { MODEL_KEYS, RUN_KEYS };
#define N_TABLES 2

// The shorthand `modern`: these settings, in this order. The one list of
// them: its help and its messages are made from it (modern_help).
static const char *const MODERN[] = { "norm=rmsnorm", "mlp=swiglu", "qk_norm=true", "bias=false", NULL };

// The struct a key's field lives in: the model's rows are a ModelConfig's,
// the run's and the sampling's a RunConfig's. The const is cast away once,
// here, so that printing (const Config) and parsing (Config) share it;
// printing never writes through it.
static void *part_of(const Config *c, const ConfigKey *k) {
    return k->part == PART_MODEL ? (void *)&c->model : (void *)&c->run;
}
static void *field_of(const Config *c, const ConfigKey *k) { return (char *)part_of(c, k) + k->offset; }

static size_t field_size(const ConfigKey *k) {
    switch (k->type) {
    case KEY_U64:   return sizeof(unsigned long long);
    case KEY_FLOAT: return sizeof(float);
    case KEY_BOOL:  return sizeof(bool);
    default:        return sizeof(int);   // KEY_INT, KEY_ENUM
    }
}

static const ConfigKey *find_key(const char *key, size_t keylen) {
    for (int t = 0; t < N_TABLES; t++)
        for (const ConfigKey *k = TABLES[t]; k->key; k++)
            if (strlen(k->key) == keylen && strncmp(k->key, key, keylen) == 0) return k;
    return NULL;
}

const ConfigKey *config_find_key(const char *key) { return key ? find_key(key, strlen(key)) : NULL; }

Config config_default(void) {
    Config c;
    memset(&c, 0, sizeof c);   // no stray padding bytes: configs compare with memcmp in tests
    c.model = model_config_default();
    c.run = run_config_default();
    return c;
}

// ---------------------------------------------------------------------------
// Strict number parsing: the whole string must be the number. strtol alone
// would happily read "12abc" as 12 and " 7" as 7, and strtoull reads "-1" as
// 2^64-1; a typo in a run's config must fail loudly instead.

static int parse_int(const char *s, int *out) {
    return isspace((unsigned char)*s) ? -1 : parse_int_in(s, INT_MIN, INT_MAX, out);
}

static int parse_u64(const char *s, unsigned long long *out) {
    // No '-' (strtoull would wrap it around) and no leading space.
    if (!isdigit((unsigned char)s[*s == '+'])) return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

// Rejects nan, inf and values that overflow or underflow a float. strtof
// (not strtod + cast) so that format_float_shortest's output parses back to the same float.
static int parse_float(const char *s, float *out) {
    if (!*s || isspace((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    if (errno || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static int parse_bool(const char *s, bool *out) {
    if (!strcmp(s, "true") || !strcmp(s, "1")) { *out = true; return 0; }
    if (!strcmp(s, "false") || !strcmp(s, "0")) { *out = false; return 0; }
    return -1;
}

// ---------------------------------------------------------------------------
// config_set

static const char *modern_help(void) {
    static char help[128];
    size_t used = (size_t)snprintf(help, sizeof help, "shorthand for");
    for (int i = 0; MODERN[i]; i++) used += (size_t)snprintf(help + used, sizeof help - used, " %s", MODERN[i]);
    return help;
}

static int set_modern(Config *c, const char *value, char *err, size_t errlen) {
    bool on = true;
    if (value && parse_bool(value, &on) != 0)
        return errorf(err, errlen, "bad value '%s' for modern: allowed: true | 1 (%s)", value, modern_help());
    // modern=false is an error, not a no-op: it could only mean "undo the
    // shorthand", which is ambiguous once its keys were set one by one.
    if (!on)
        return errorf(err, errlen, "modern=%s is not supported: modern only switches on (%s); "
                    "set those keys one by one instead", value, modern_help());
    for (int i = 0; MODERN[i]; i++) config_set(c, MODERN[i], NULL, 0);   // each a value its row allows
    return 0;
}

static void key_list(char *out, size_t outlen) {
    size_t used = 0;
    out[0] = '\0';
    for (int t = 0; t < N_TABLES; t++)
        for (const ConfigKey *k = TABLES[t]; k->key && used < outlen; k++)
            used += (size_t)snprintf(out + used, outlen - used, "%s, ", k->key);
    if (used < outlen) snprintf(out + used, outlen - used, "modern");
}

// The value into the field of a copy of c, then the copy checked against the
// key's row (the bounds model_config_check and run_config_check apply): 0,
// and c updated; or -1, and c as it was.
static int parse_value(Config *c, const ConfigKey *k, const char *value) {
    Config next = *c;
    void *field = field_of(&next, k);
    int bad = 0, v = 0;
    switch (k->type) {
    case KEY_INT:   bad = parse_int(value, field); break;
    case KEY_U64:   bad = parse_u64(value, field); break;
    case KEY_FLOAT: bad = parse_float(value, field); break;
    case KEY_BOOL:  bad = parse_bool(value, field); break;
    case KEY_ENUM:
        while (k->names[v] && strcmp(value, k->names[v]) != 0) v++;
        bad = !k->names[v];
        *(int *)field = v;
        break;
    }
    if (bad || config_key_check(k, part_of(&next, k), NULL, 0) != 0) return -1;
    *c = next;
    return 0;
}

int config_set(Config *c, const char *kv, char *err, size_t errlen) {
    if (!kv) return errorf(err, errlen, "config_set: no key=value given");
    const char *eq = strchr(kv, '=');
    size_t keylen = eq ? (size_t)(eq - kv) : strlen(kv);
    const char *value = eq ? eq + 1 : NULL;

    if (keylen == 6 && !strncmp(kv, "modern", 6)) return set_modern(c, value, err, errlen);

    const ConfigKey *k = find_key(kv, keylen);
    if (!k) {
        char keys[512];
        key_list(keys, sizeof keys);
        return errorf(err, errlen, "unknown config key '%.*s'; known keys: %s", (int)keylen, kv, keys);
    }
    char allowed[128];
    config_key_allowed(k, allowed, sizeof allowed);
    if (!value) return errorf(err, errlen, "'%s' needs a value: %s=<%s>", k->key, k->key, allowed);
    if (parse_value(c, k, value) != 0)
        return errorf(err, errlen, "bad value '%s' for %s (%s): allowed: %s", value, k->key, k->help, allowed);
    return 0;
}

void config_set_or_exit(Config *c, const char *kv) {
    char err[1024];
    if (config_set(c, kv, err, sizeof err) == 0) return;
    fprintf(stderr, "error: %s\n", err);
    exit(2);
}

// ---------------------------------------------------------------------------
// config_validate: each part checks itself, once.

int config_validate(const Config *c, char *err, size_t errlen) {
    if (model_config_check(&c->model, err, errlen) != 0) return -1;
    return run_config_check(&c->run, err, errlen);
}

int config_apply(Config *c, const char *const *kvs, int n, char *err, size_t errlen) {
    Config next = *c;
    for (int i = 0; i < n; i++)
        if (config_set(&next, kvs[i], err, errlen) != 0) return -1;
    if (config_validate(&next, err, errlen) != 0) return -1;
    *c = next;
    return 0;
}

// ---------------------------------------------------------------------------
// Printing

// A float as a reader would type it: the fewest significant digits that
// read back (strtof) as the same float, so lr 3e-4 prints as 3e-4 and not
// as 0.000300000014, the float nearest 3e-4 with nine digits. Below 0.01
// in the exponent form the tutorial writes learning rates in (3e-4, 2e-3).
void format_float_shortest(float v, char *out, size_t outlen) {
    char buf[64];
    bool small = v != 0 && fabsf(v) < 0.01f;
    // a whole part is printed whole (100, not 1e+02)
    int first = !small && fabsf(v) >= 1 && fabsf(v) < 1e9f ? (int)floor(log10(fabs((double)v))) + 1 : 1;
    for (int digits = first; digits <= 9; digits++) {
        snprintf(buf, sizeof buf, small ? "%.*e" : "%.*g", small ? digits - 1 : digits, (double)v);
        if (strtof(buf, NULL) == v) break;
    }
    if (small) {   // 3e-04 -> 3e-4
        char *e = strchr(buf, 'e');
        if (e) {
            char *digits = e + 2;   // past 'e' and the sign
            while (*digits == '0' && digits[1]) memmove(digits, digits + 1, strlen(digits));
            if (e[1] == '+') memmove(e + 1, e + 2, strlen(e + 1));
        }
    }
    snprintf(out, outlen, "%s", buf);
}

// One field's value as the string config_set accepts back.
static void field_value(const Config *c, const ConfigKey *k, char *out, size_t outlen) {
    const void *p = field_of(c, k);
    switch (k->type) {
    case KEY_INT:   snprintf(out, outlen, "%d", *(const int *)p); break;
    case KEY_U64:   snprintf(out, outlen, "%llu", *(const unsigned long long *)p); break;
    // it reads back bit for bit (format_float_shortest)
    case KEY_FLOAT: format_float_shortest(*(const float *)p, out, outlen); break;
    case KEY_BOOL:  snprintf(out, outlen, "%s", *(const bool *)p ? "true" : "false"); break;
    case KEY_ENUM: {
        int v = *(const int *)p, n = 0;
        while (k->names[n]) n++;
        snprintf(out, outlen, "%s", (v >= 0 && v < n) ? k->names[v] : "?");
        break;
    }
    }
}

// The fields of one table (MODEL_KEYS, RUN_KEYS), in its order.
static void foreach_field(const Config *c, const ConfigKey *keys, ConfigFieldFn fn, void *ctx) {
    char value[64];
    for (const ConfigKey *k = keys; k->key; k++) {
        field_value(c, k, value, sizeof value);
        fn(k->key, value, ctx);
    }
}

void config_foreach_field(const Config *c, ConfigFieldFn fn, void *ctx) {
    for (int t = 0; t < N_TABLES; t++) foreach_field(c, TABLES[t], fn, ctx);
}

void model_config_foreach_field(const ModelConfig *m, ConfigFieldFn fn, void *ctx) {
    Config c = { .model = *m };
    foreach_field(&c, MODEL_KEYS, fn, ctx);
}

void run_config_foreach_field(const RunConfig *r, ConfigFieldFn fn, void *ctx) {
    Config c = { .run = *r };
    foreach_field(&c, RUN_KEYS, fn, ctx);
}

// Key by key: each field's bytes from saved, or from given where its row
// says a resume takes the options'.
Config config_for_resume(const Config *saved, const Config *given) {
    Config out = *saved;
    for (int t = 0; t < N_TABLES; t++)
        for (const ConfigKey *k = TABLES[t]; k->key; k++)
            if (k->resume == FROM_OPTIONS) memcpy(field_of(&out, k), field_of(given, k), field_size(k));
    return out;
}

bool configs_agree(const Config *a, const Config *b, bool ignore_seed) {
    char va[64], vb[64];
    for (int t = 0; t < N_TABLES; t++)
        for (const ConfigKey *k = TABLES[t]; k->key; k++) {
            if (k->differs == SAME_RUN || (ignore_seed && k->differs == SEED_PAIR)) continue;
            field_value(a, k, va, sizeof va);
            field_value(b, k, vb, sizeof vb);
            if (strcmp(va, vb) != 0) return false;
        }
    return true;
}

void config_print_keys(const Config *c, FILE *f) {
    static const char *const PART_NAME[] = { "the model", "the run", "its samples" };
    fprintf(f, "config keys (--set key=value); * = a resume takes the option's value, not the checkpoint's:\n");
    char name[32], value[64], allowed[128];
    for (int t = 0; t < N_TABLES; t++)
        for (const ConfigKey *k = TABLES[t]; k->key; k++) {
            if (k == TABLES[t] || k->part != k[-1].part) fprintf(f, " %s:\n", PART_NAME[k->part]);
            snprintf(name, sizeof name, "%s%s", k->key, k->resume == FROM_OPTIONS ? "*" : "");
            field_value(c, k, value, sizeof value);
            config_key_allowed(k, allowed, sizeof allowed);
            fprintf(f, "  %-16s = %-10s  %s; %s\n", name, value, k->help, allowed);
        }
    fprintf(f, "  %-16s   %-10s  %s\n", "modern", "", modern_help());
}

// Appends "key=value" to a description (DescribeText), space-separated;
// what does not fit is left out, and the text stays terminated.
typedef struct { char *out; size_t outlen, used; } DescribeText;
static void describe_field(const char *key, const char *value, void *ctx) {
    DescribeText *d = ctx;
    if (d->used >= d->outlen) return;
    int n = snprintf(d->out + d->used, d->outlen - d->used, "%s%s=%s", d->used ? " " : "", key, value);
    if (n < 0 || (size_t)n >= d->outlen - d->used) d->used = d->outlen;   // truncated, still terminated
    else d->used += (size_t)n;
}

// The fields of tables[0..n) as one line.
static void describe(const Config *c, const ConfigKey *const *tables, int n, char *out, size_t outlen) {
    if (!out || !outlen) return;
    out[0] = '\0';
    DescribeText d = { out, outlen, 0 };
    for (int t = 0; t < n; t++) foreach_field(c, tables[t], describe_field, &d);
}

void config_describe(const Config *c, char *out, size_t outlen) { describe(c, TABLES, N_TABLES, out, outlen); }

void model_config_describe(const ModelConfig *m, char *out, size_t outlen) {
    Config c = { .model = *m };
    describe(&c, TABLES, 1, out, outlen);   // TABLES[0] is MODEL_KEYS
}
