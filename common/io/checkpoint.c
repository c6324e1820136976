// checkpoint.c: Model <-> safetensors file. See checkpoint.h.
#include "checkpoint.h"
#include "checksum.h"
#include "nn/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Longest tensor name we build: a prefix plus a parameter name.
#define CKPT_NAME_LEN (64 + PARAM_NAME_LEN)

// prefix + name into out; -1 if it does not fit.
static int join_name(char *out, const char *prefix, const char *name) {
    int n = snprintf(out, CKPT_NAME_LEN, "%s%s", prefix, name);
    return n < 0 || n >= CKPT_NAME_LEN ? -1 : 0;
}

// ---------------------------------------------------------------------------
// Saving

static void add_config_field(const char *key, const char *value, void *writer) {
    st_writer_meta(writer, key, value);   // errors are sticky in the writer
}

int checkpoint_save(const char *path, const Model *m, const RunConfig *run,
                    const CheckpointArray *extra, int n_extra,
                    const CheckpointMeta *meta, int n_meta,
                    char *err, size_t errlen) {
    if (!m || !m->params) return errorf(err, errlen, "%s: no model to save", path);
    for (int i = 0; i < n_meta; i++) {
        if (!meta[i].key || !meta[i].value)
            return errorf(err, errlen, "%s: metadata entry %d has no key or value", path, i);
        if (config_find_key(meta[i].key))
            return errorf(err, errlen, "%s: metadata key '%s' is a config field; it is saved from the "
                        "model's config and the run's", path, meta[i].key);
    }

    StWriter w;
    st_writer_init(&w);
    model_config_foreach_field(&m->cfg, add_config_field, &w);
    if (run) run_config_foreach_field(run, add_config_field, &w);
    for (int i = 0; i < n_meta; i++) st_writer_meta(&w, meta[i].key, meta[i].value);

    // The parameters, then each extra array, tensor by tensor in table order.
    for (int e = -1; e < n_extra; e++) {
        const char *prefix = e < 0 ? "" : extra[e].prefix;
        const float *base = e < 0 ? m->params : extra[e].values;
        if (!prefix || !base) {
            st_writer_free(&w);
            return errorf(err, errlen, "%s: extra array %d has no prefix or no values", path, e);
        }
        for (int i = 0; i < m->n_tensors; i++) {
            const ParamTensor *t = &m->tensors[i];
            char name[CKPT_NAME_LEN];
            if (join_name(name, prefix, t->name) != 0) {
                st_writer_free(&w);
                return errorf(err, errlen, "%s: tensor name '%s%s' is too long", path, prefix, t->name);
            }
            long shape[2] = {t->shape[0], t->shape[1]};
            st_writer_add(&w, name, t->ndim, shape, base + t->offset);
        }
    }
    st_writer_add_checksums(&w);   // last: it covers every tensor and metadata entry
    int rc = st_writer_save_atomic(&w, path, err, errlen);
    st_writer_free(&w);
    return rc;
}

// ---------------------------------------------------------------------------
// The config

int checkpoint_config_from(const SafeTensors *st, const char *src, Config *out,
                           char *err, size_t errlen) {
    Config c = config_default();
    for (int i = 0; i < st->n_meta; i++) {
        const char *k = st->meta_keys[i];
        if (!config_find_key(k)) continue;   // trainer state, adamw.*, sample.*
        char kv[256], why[512];
        if (snprintf(kv, sizeof kv, "%s=%s", k, st->meta_values[i]) >= (int)sizeof kv)
            return errorf(err, errlen, "%s: metadata value of '%s' is too long", src, k);
        if (config_set(&c, kv, why, sizeof why) != 0)
            return errorf(err, errlen, "%s: metadata: %s", src, why);
    }
    char why[512];
    if (config_validate(&c, why, sizeof why) != 0)
        return errorf(err, errlen, "%s: the stored config is invalid: %s", src, why);
    *out = c;
    return 0;
}

// st_read, then the file's checksums (checksum.h): a damaged checkpoint is
// refused here, with the tensor named, before anything uses it.
static int read_checked(const char *path, SafeTensors *st, char *err, size_t errlen) {
    if (st_read(path, st, err, errlen) != 0) return -1;
    if (st_verify_checksums(st, path, err, errlen) != 0) {
        st_free(st);
        return -1;
    }
    return 0;
}

int checkpoint_read_config(const char *path, Config *out, char *err, size_t errlen) {
    SafeTensors st;
    if (read_checked(path, &st, err, errlen) != 0) return -1;
    int rc = checkpoint_config_from(&st, path, out, err, errlen);
    st_free(&st);
    return rc;
}

// ---------------------------------------------------------------------------
// Tensors

static void shape_text(char *out, size_t outlen, int ndim, const long *shape) {
    size_t used = (size_t)snprintf(out, outlen, "[");
    for (int d = 0; d < ndim && used < outlen; d++)
        used += (size_t)snprintf(out + used, outlen - used, "%s%ld", d ? ", " : "", shape[d]);
    if (used < outlen) snprintf(out + used, outlen - used, "]");
}

// The file's tensor for parameter t, checked against the model's shape.
// NULL with a message if it is missing or has another shape.
static const StTensor *find_matching(const SafeTensors *st, const char *src, const char *prefix,
                                     const ParamTensor *t, char *err, size_t errlen) {
    char name[CKPT_NAME_LEN];
    if (join_name(name, prefix, t->name) != 0) {
        errorf(err, errlen, "%s: tensor name '%s%s' is too long", src, prefix, t->name);
        return NULL;
    }
    const StTensor *s = st_find(st, name);
    if (!s) {
        errorf(err, errlen, "%s: no tensor '%s' (the config needs it)", src, name);
        return NULL;
    }
    long want[2] = {t->shape[0], t->shape[1]};
    int same = s->ndim == t->ndim;
    for (int d = 0; same && d < t->ndim; d++) same = s->shape[d] == want[d];
    if (!same) {
        char have_s[96], want_s[96];
        shape_text(have_s, sizeof have_s, s->ndim, s->shape);
        shape_text(want_s, sizeof want_s, t->ndim, want);
        errorf(err, errlen, "%s: tensor '%s' has shape %s, the model expects %s", src, name, have_s, want_s);
        return NULL;
    }
    return s;
}

// Is name (without prefix) a parameter name of some TinyDiT, as nn/model.c names them?
static int looks_like_param(const char *name) {
    static const char *const exact[] = {"pos_row", "pos_col"};
    static const char *const modules[] = {"patch_embed.", "t_fc1.", "t_fc2.", "blocks.", "ada_f.", "head."};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(name, exact[i]) == 0) return 1;
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++)
        if (strncmp(name, modules[i], strlen(modules[i])) == 0) return 1;
    return 0;
}

// Every parameter's "<prefix><name>" tensor into dst (the parameter layout),
// all of them checked before anything is copied, so that a failed load
// leaves dst as it was.
static int copy_checked(const SafeTensors *st, const char *src, const char *prefix, const Model *m, float *dst,
                        char *err, size_t errlen) {
    for (int i = 0; i < m->n_tensors; i++)
        if (!find_matching(st, src, prefix, &m->tensors[i], err, errlen)) return -1;
    for (int i = 0; i < m->n_tensors; i++) {
        const ParamTensor *t = &m->tensors[i];
        const StTensor *s = find_matching(st, src, prefix, t, err, errlen);
        memcpy(dst + t->offset, s->data, t->size * sizeof(float));
    }
    return 0;
}

int checkpoint_copy_params(const SafeTensors *st, const char *src, const char *prefix,
                           Model *m, char *err, size_t errlen) {
    for (int i = 0; i < m->n_tensors; i++)   // a missing tensor is named before a stray one
        if (!find_matching(st, src, prefix, &m->tensors[i], err, errlen)) return -1;
    size_t plen = strlen(prefix);
    for (int i = 0; i < st->n_tensors; i++) {
        const char *name = st->tensors[i].name;
        if (strncmp(name, prefix, plen) != 0) continue;
        if (looks_like_param(name + plen) && !model_find(m, name + plen)) {
            char desc[256];
            model_config_describe(&m->cfg, desc, sizeof desc);
            return errorf(err, errlen, "%s: tensor '%s' is not a parameter of this config (%s): "
                        "the metadata and the tensors disagree", src, name, desc);
        }
    }
    return copy_checked(st, src, prefix, m, m->params, err, errlen);
}

int checkpoint_copy_array(const SafeTensors *st, const char *src, const char *prefix,
                          const Model *m, float *dst, char *err, size_t errlen) {
    int present = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        char name[CKPT_NAME_LEN];
        if (join_name(name, prefix, m->tensors[i].name) == 0 && st_find(st, name)) present++;
    }
    return present == 0 ? 1 : copy_checked(st, src, prefix, m, dst, err, errlen);
}

// ---------------------------------------------------------------------------
// Whole-file helpers

int checkpoint_load(const char *path, Model *m, SafeTensors *st_out, char *err, size_t errlen) {
    SafeTensors st;
    if (read_checked(path, &st, err, errlen) != 0) return -1;
    Config c;
    char why[512];
    int rc = checkpoint_config_from(&st, path, &c, err, errlen);
    if (rc == 0 && model_build(m, &c.model, why, sizeof why) != 0)
        rc = errorf(err, errlen, "%s: cannot build the model: %s", path, why);
    else if (rc == 0 && checkpoint_copy_params(&st, path, "", m, err, errlen) != 0) {
        model_free(m);
        rc = -1;
    }
    if (rc == 0 && st_out) *st_out = st;
    else st_free(&st);
    return rc;
}

int checkpoint_use_ema(const char *path, Model *m, char *err, size_t errlen) {
    SafeTensors st;
    if (read_checked(path, &st, err, errlen) != 0) return -1;
    int rc = checkpoint_copy_array(&st, path, CHECKPOINT_EMA, m, m->params, err, errlen);
    st_free(&st);
    if (rc == 1) errorf(err, errlen, "%s holds no EMA of the weights (ema.*): it was trained with ema=0", path);
    return rc;
}
