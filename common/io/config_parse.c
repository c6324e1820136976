// config_parse.c: the `--set key=value` parser and the printing of a Config
// (the model's fields and the run's). The defaults and the checks are each
// part's own: nn/config.c for the model, run_config.c for the run.
//
// Every field is described once, in the FIELDS table below: its key, its
// kind (int, unsigned 64-bit, float, bool or enum), where it lives in Config
// (the model or the run), where a resume takes it from, the smallest value
// that makes sense and a one-line help. Parsing, printing, checkpoint
// metadata (config_foreach_field) and the key list all walk that one table,
// so a new field cannot be settable but forgotten in checkpoints.
#include "config_parse.h"
#include "nn/errors.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------
// The field table

typedef enum { F_INT, F_U64, F_FLOAT, F_BOOL, F_ENUM } FieldKind;

// Whose field it is: the model's, or the run's, and for the run's where a
// resume takes it from (config_for_resume).
typedef enum {
    PART_MODEL,          // the model: a resume keeps the checkpoint's
    PART_RUN,            // what the run computes: a resume keeps the checkpoint's
    PART_RUN_PROCESS,    // how far and how this process runs: a resume takes the options'
} FieldPart;

typedef struct {
    const char *key;
    FieldKind kind;
    FieldPart part;
    size_t offset;              // offsetof(Config, model.field) or offsetof(Config, run.field)
    int min;                    // F_INT: smallest allowed value (floats: see float_may_be_zero)
    const char *const *names;   // F_ENUM: names indexed by the enum value, NULL-terminated
    const char *help;
} Field;

static const char *const NORM_NAMES[] = {"layernorm", "rmsnorm", NULL};
static const char *const MLP_NAMES[] = {"gelu", "swiglu", NULL};
static const char *const POS_NAMES[] = {"learned", "rope2d", NULL};
static const char *const ADA_NAMES[] = {"plain", "zero", NULL};

#define MODEL(f) offsetof(Config, model.f)
#define RUN(f) offsetof(Config, run.f)
static const Field FIELDS[] = {
    {"img",             F_INT,   PART_MODEL,       MODEL(img),             1, NULL, "image side in pixels"},
    {"channels",        F_INT,   PART_MODEL,       MODEL(channels),        1, NULL, "colour channels"},
    {"patch",           F_INT,   PART_MODEL,       MODEL(patch),           1, NULL, "patch side in pixels (img must be a multiple)"},
    {"dim",             F_INT,   PART_MODEL,       MODEL(dim),             1, NULL, "model width D (a multiple of heads)"},
    {"depth",           F_INT,   PART_MODEL,       MODEL(depth),           1, NULL, "number of transformer blocks"},
    {"heads",           F_INT,   PART_MODEL,       MODEL(heads),           1, NULL, "attention heads"},
    {"mlp_ratio",       F_FLOAT, PART_MODEL,       MODEL(mlp_ratio),       0, NULL, "MLP hidden width / D"},
    {"freq_dim",        F_INT,   PART_MODEL,       MODEL(freq_dim),        2, NULL, "sinusoidal timestep features (even)"},
    {"norm",            F_ENUM,  PART_MODEL,       MODEL(norm),            0, NORM_NAMES, "normalisation before attn/mlp"},
    {"qk_norm",         F_BOOL,  PART_MODEL,       MODEL(qk_norm),         0, NULL, "RMSNorm on queries and keys"},
    {"mlp",             F_ENUM,  PART_MODEL,       MODEL(mlp),             0, MLP_NAMES, "feed-forward kind"},
    {"mlp_multiple_of", F_INT,   PART_MODEL,       MODEL(mlp_multiple_of), 1, NULL, "round SwiGLU hidden up to a multiple of this"},
    {"pos",             F_ENUM,  PART_MODEL,       MODEL(pos),             0, POS_NAMES, "position encoding"},
    {"rope_base",       F_FLOAT, PART_MODEL,       MODEL(rope_base),       0, NULL, "RoPE frequency base"},
    {"bias",            F_BOOL,  PART_MODEL,       MODEL(bias),            0, NULL, "biases in every Linear layer"},
    {"ada",             F_ENUM,  PART_MODEL,       MODEL(ada),             0, ADA_NAMES, "adaLN: plain, or zero (adaLN-Zero: gated halves, zero init)"},
    {"classes",         F_INT,   PART_MODEL,       MODEL(classes),         0, NULL, "class labels, 0 = unconditional; N: labels 0..N-1 and the null label N"},
    {"seed",            F_U64,   PART_RUN,         RUN(seed),              0, NULL, "random seed of the run"},
    {"data_seed",       F_INT,   PART_RUN,         RUN(data_seed),        -1, NULL, "seed of the data order and flips alone, -1 = the run's seed"},
    {"lr",              F_FLOAT, PART_RUN,         RUN(lr),                0, NULL, "AdamW learning rate"},
    {"weight_decay",    F_FLOAT, PART_RUN,         RUN(weight_decay),      0, NULL, "AdamW weight decay of 2-D tensors"},
    {"batch",           F_INT,   PART_RUN,         RUN(batch),             1, NULL, "images per training step"},
    {"steps",           F_INT,   PART_RUN_PROCESS, RUN(steps),             0, NULL, "training steps"},
    {"flip",            F_BOOL,  PART_RUN,         RUN(flip),              0, NULL, "random horizontal flips of training images"},
    {"label_drop",      F_FLOAT, PART_RUN,         RUN(label_drop),        0, NULL, "classes > 0: probability in [0, 1] that a training label becomes the null label"},
    {"threads",         F_INT,   PART_RUN_PROCESS, RUN(threads),           0, NULL, "OpenMP/BLAS threads, 0 = all cores"},
    {"val_every",       F_INT,   PART_RUN_PROCESS, RUN(val_every),         0, NULL, "steps between val MSE checks while training, 0 = only at the end"},
    {"guidance",        F_FLOAT, PART_RUN_PROCESS, RUN(guidance),          0, NULL, "classes > 0: classifier-free guidance scale of sampling, 1 = none"},
};
#undef MODEL
#undef RUN
#define N_FIELDS ((int)(sizeof FIELDS / sizeof FIELDS[0]))

static const char *MODERN_HELP = "shorthand for norm=rmsnorm mlp=swiglu qk_norm=true bias=false";

// Where a field lives inside c. The const is cast away once, here, so that
// printing (const Config) and parsing (Config) share the accessors; printing
// never writes through them.
static void *field_ptr(const Config *c, const Field *f) { return (char *)c + f->offset; }
#define field_int(c, f) ((int *)field_ptr(c, f))
#define field_float(c, f) ((float *)field_ptr(c, f))
#define field_bool(c, f) ((bool *)field_ptr(c, f))
#define field_u64(c, f) ((unsigned long long *)field_ptr(c, f))

Config config_default(void) {
    Config c;
    memset(&c, 0, sizeof c);   // no stray padding bytes: configs compare with memcmp in tests
    c.model = model_config_default();
    c.run = run_config_default();
    return c;
}

// Floats must be > 0, except weight_decay (0 its default), label_drop (a
// probability) and guidance (0 is the unconditional model), which may be 0.
static bool float_may_be_zero(const Field *f) {
    return strcmp(f->key, "weight_decay") == 0 || strcmp(f->key, "label_drop") == 0 ||
           strcmp(f->key, "guidance") == 0;
}

// Enums are stored as their C enum type; all four are int-sized (C11 6.7.2.2
// lets the compiler pick, but gcc uses unsigned int / int for these ranges).
_Static_assert(sizeof(NormKind) == sizeof(int) && sizeof(MlpKind) == sizeof(int) &&
               sizeof(PosKind) == sizeof(int) && sizeof(AdaKind) == sizeof(int),
               "enums are read and written as int");

static size_t field_size(const Field *f) {
    switch (f->kind) {
    case F_U64:   return sizeof(unsigned long long);
    case F_FLOAT: return sizeof(float);
    case F_BOOL:  return sizeof(bool);
    default:      return sizeof(int);   // F_INT, F_ENUM
    }
}

static const Field *find_field(const char *key, size_t keylen) {
    for (int i = 0; i < N_FIELDS; i++)
        if (strlen(FIELDS[i].key) == keylen && strncmp(FIELDS[i].key, key, keylen) == 0)
            return &FIELDS[i];
    return NULL;
}


// The list of enum names as "a | b | c".
static void enum_choices(const Field *f, char *out, size_t outlen) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; f->names[i]; i++) {
        int n = snprintf(out + used, outlen - used, "%s%s", i ? " | " : "", f->names[i]);
        if (n < 0 || (size_t)n >= outlen - used) break;
        used += (size_t)n;
    }
}

// What values a field accepts, for error messages and the key list.
static void allowed_values(const Field *f, char *out, size_t outlen) {
    switch (f->kind) {
    case F_INT:   snprintf(out, outlen, "an integer >= %d", f->min); break;
    case F_U64:   snprintf(out, outlen, "an integer in [0, 2^64)"); break;
    case F_FLOAT: snprintf(out, outlen, "a finite number %s 0", float_may_be_zero(f) ? ">=" : ">"); break;
    case F_BOOL:  snprintf(out, outlen, "true | false | 1 | 0"); break;
    case F_ENUM:  enum_choices(f, out, outlen); break;
    }
}

// ---------------------------------------------------------------------------
// Strict number parsing: the whole string must be the number. strtol alone
// would happily read "12abc" as 12 and " 7" as 7, and strtoull reads "-1" as
// 2^64-1; a typo in a run's config must fail loudly instead.

static int parse_int(const char *s, long lo, long hi, long *out) {
    if (!*s || isspace((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
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

static int set_modern(Config *c, const char *value, char *err, size_t errlen) {
    bool on = true;
    if (value && parse_bool(value, &on) != 0)
        return errorf(err, errlen, "bad value '%s' for modern: allowed: true | 1 (%s)", value, MODERN_HELP);
    // modern=false is an error, not a no-op: it could only mean "undo the
    // shorthand", which is ambiguous once the four fields were set one by one.
    if (!on)
        return errorf(err, errlen, "modern=%s is not supported: modern only switches on (%s); "
                    "set norm, mlp, qk_norm and bias individually instead", value, MODERN_HELP);
    c->model.norm = NORM_RMSNORM;
    c->model.mlp = MLP_SWIGLU;
    c->model.qk_norm = true;
    c->model.bias = false;
    return 0;
}

static void key_list(char *out, size_t outlen) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i <= N_FIELDS; i++) {
        const char *k = i < N_FIELDS ? FIELDS[i].key : "modern";
        int n = snprintf(out + used, outlen - used, "%s%s", i ? ", " : "", k);
        if (n < 0 || (size_t)n >= outlen - used) break;
        used += (size_t)n;
    }
}

int config_set(Config *c, const char *kv, char *err, size_t errlen) {
    if (!kv) return errorf(err, errlen, "config_set: no key=value given");
    const char *eq = strchr(kv, '=');
    size_t keylen = eq ? (size_t)(eq - kv) : strlen(kv);
    const char *value = eq ? eq + 1 : NULL;

    if (keylen == 6 && !strncmp(kv, "modern", 6)) return set_modern(c, value, err, errlen);

    const Field *f = find_field(kv, keylen);
    if (!f) {
        char keys[512];
        key_list(keys, sizeof keys);
        return errorf(err, errlen, "unknown config key '%.*s'; known keys: %s", (int)keylen, kv, keys);
    }
    if (!value) {
        char allowed[128];
        allowed_values(f, allowed, sizeof allowed);
        return errorf(err, errlen, "'%s' needs a value: %s=<%s>", f->key, f->key, allowed);
    }

    int bad = 0;
    switch (f->kind) {
    case F_INT: {
        long v;
        bad = parse_int(value, f->min, INT_MAX, &v);
        if (!bad) *field_int(c, f) = (int)v;
        break;
    }
    case F_U64: bad = parse_u64(value, field_u64(c, f)); break;
    case F_FLOAT: {
        float v;
        bad = parse_float(value, &v);
        // lr, mlp_ratio and rope_base must be positive; weight_decay, label_drop and guidance may be 0.
        if (!bad && (float_may_be_zero(f) ? v < 0.0f : v <= 0.0f)) bad = 1;
        if (!bad) *field_float(c, f) = v;
        break;
    }
    case F_BOOL: bad = parse_bool(value, field_bool(c, f)); break;
    case F_ENUM: {
        bad = 1;
        for (int i = 0; f->names[i]; i++)
            if (!strcmp(value, f->names[i])) { *field_int(c, f) = i; bad = 0; break; }
        break;
    }
    }
    if (bad) {
        char allowed[128];
        allowed_values(f, allowed, sizeof allowed);
        return errorf(err, errlen, "bad value '%s' for %s (%s): allowed: %s", value, f->key, f->help, allowed);
    }
    return 0;
}

int config_set_or_report(Config *c, const char *kv) {
    char err[1024];
    if (config_set(c, kv, err, sizeof err) == 0) return 0;
    fprintf(stderr, "error: %s\n\n", err);
    config_print_keys(c, stderr);
    return 2;
}

void config_set_or_exit(Config *c, const char *kv) {
    if (config_set_or_report(c, kv) != 0) exit(2);
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
static void field_value(const Config *c, const Field *f, char *out, size_t outlen) {
    switch (f->kind) {
    case F_INT:   snprintf(out, outlen, "%d", *field_int(c, f)); break;
    case F_U64:   snprintf(out, outlen, "%llu", *field_u64(c, f)); break;
    // it reads back bit for bit (format_float_shortest)
    case F_FLOAT: format_float_shortest(*field_float(c, f), out, outlen); break;
    case F_BOOL:  snprintf(out, outlen, "%s", *field_bool(c, f) ? "true" : "false"); break;
    case F_ENUM: {
        int v = *field_int(c, f), n = 0;
        while (f->names[n]) n++;
        snprintf(out, outlen, "%s", (v >= 0 && v < n) ? f->names[v] : "?");
        break;
    }
    }
}

// The fields of the parts in mask (1 << part), in table order.
#define MASK_MODEL (1u << PART_MODEL)
#define MASK_RUN ((1u << PART_RUN) | (1u << PART_RUN_PROCESS))
static void foreach_field(const Config *c, unsigned mask, ConfigFieldFn fn, void *ctx) {
    char value[64];
    for (int i = 0; i < N_FIELDS; i++) {
        if (!(mask & (1u << FIELDS[i].part))) continue;
        field_value(c, &FIELDS[i], value, sizeof value);
        fn(FIELDS[i].key, value, ctx);
    }
}

void config_foreach_field(const Config *c, ConfigFieldFn fn, void *ctx) {
    foreach_field(c, MASK_MODEL | MASK_RUN, fn, ctx);
}

void model_config_foreach_field(const ModelConfig *m, ConfigFieldFn fn, void *ctx) {
    Config c = config_default();
    c.model = *m;
    foreach_field(&c, MASK_MODEL, fn, ctx);
}

void run_config_foreach_field(const RunConfig *r, ConfigFieldFn fn, void *ctx) {
    Config c = config_default();
    c.run = *r;
    foreach_field(&c, MASK_RUN, fn, ctx);
}

static bool is_key_of(const char *key, unsigned mask) {
    const Field *f = key ? find_field(key, strlen(key)) : NULL;
    return f && (mask & (1u << f->part));
}
bool config_is_model_key(const char *key) { return is_key_of(key, MASK_MODEL); }
bool config_is_run_key(const char *key) { return is_key_of(key, MASK_RUN); }
bool config_key_taken_on_resume(const char *key) { return is_key_of(key, 1u << PART_RUN_PROCESS); }

// Field by field through the table: each field's bytes from saved, or from
// given where the table says a resume takes the options'.
Config config_for_resume(const Config *saved, const Config *given) {
    Config out = *saved;
    for (int i = 0; i < N_FIELDS; i++)
        if (FIELDS[i].part == PART_RUN_PROCESS)
            memcpy((char *)&out + FIELDS[i].offset, (const char *)given + FIELDS[i].offset, field_size(&FIELDS[i]));
    return out;
}

void config_print_keys(const Config *c, void *file) {
    FILE *f = file ? (FILE *)file : stderr;
    Config def = config_default();
    if (!c) c = &def;
    fprintf(f, "config keys (--set key=value):\n");
    char value[64], allowed[128];
    for (int i = 0; i < N_FIELDS; i++) {
        field_value(c, &FIELDS[i], value, sizeof value);
        allowed_values(&FIELDS[i], allowed, sizeof allowed);
        fprintf(f, "  %-16s = %-10s  %s; %s\n", FIELDS[i].key, value, FIELDS[i].help, allowed);
    }
    fprintf(f, "  %-16s   %-10s  %s\n", "modern", "", MODERN_HELP);
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

void config_describe(const Config *c, char *out, size_t outlen) {
    if (!out || !outlen) return;
    out[0] = '\0';
    DescribeText d = { out, outlen, 0 };
    config_foreach_field(c, describe_field, &d);
}

void model_config_describe(const ModelConfig *m, char *out, size_t outlen) {
    if (!out || !outlen) return;
    out[0] = '\0';
    DescribeText d = { out, outlen, 0 };
    model_config_foreach_field(m, describe_field, &d);
}
