// safetensors.c: the safetensors reader (hardened: it is fuzzed) and the
// atomic writer. See safetensors.h for the format.
#include "safetensors.h"
#include "nn/errors.h"
#include "nn/model.h"   // zeroed_floats
#include "fileio.h"

#include <cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The data section is raw little-endian floats; we memcpy them as they are.
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c assumes a little-endian machine"
#endif

// Like the official implementation: a header over 100 MB is not a header.
#define ST_MAX_HEADER (100u * 1024 * 1024)
// Offsets and sizes arrive as JSON numbers (doubles): above 2^53 they are no
// longer exact integers, so anything larger is rejected as corrupt.
#define ST_MAX_JSON_INT 9007199254740992.0

// ===========================================================================
// Reader

void st_free(SafeTensors *st) {
    if (!st) return;
    for (int i = 0; i < st->n_tensors; i++) {
        free(st->tensors[i].name);
        free(st->tensors[i].data);
    }
    free(st->tensors);
    for (int i = 0; i < st->n_meta; i++) {
        free(st->meta_keys[i]);
        free(st->meta_values[i]);
    }
    free(st->meta_keys);
    free(st->meta_values);
    memset(st, 0, sizeof *st);
}

const StTensor *st_find(const SafeTensors *st, const char *name) {
    for (int i = 0; i < st->n_tensors; i++)
        if (strcmp(st->tensors[i].name, name) == 0) return &st->tensors[i];
    return NULL;
}

const StTensor *st_need(const SafeTensors *st, const char *src, const char *name, size_t numel,
                        char *err, size_t errlen) {
    const StTensor *t = st_find(st, name);
    if (!t) errorf(err, errlen, "%s: no tensor '%s'", src, name);
    else if (numel && t->numel != numel)
        errorf(err, errlen, "%s: tensor '%s' has %zu values, expected %zu", src, name, t->numel, numel);
    else return t;
    return NULL;
}

const char *st_meta(const SafeTensors *st, const char *key) {
    for (int i = 0; i < st->n_meta; i++)
        if (strcmp(st->meta_keys[i], key) == 0) return st->meta_values[i];
    return NULL;
}

// A JSON number that is an exact non-negative integer small enough to be
// represented exactly in a double.
static int json_size(const cJSON *item, size_t *out) {
    if (!cJSON_IsNumber(item)) return -1;
    double v = item->valuedouble;
    if (!(v >= 0.0) || v > ST_MAX_JSON_INT || v != floor(v)) return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_metadata(const cJSON *meta, SafeTensors *st, const char *src, char *err, size_t errlen) {
    if (!cJSON_IsObject(meta))
        return errorf(err, errlen, "%s: __metadata__ is not a JSON object", src);
    int n = cJSON_GetArraySize(meta);
    st->meta_keys = calloc((size_t)n + 1, sizeof(char *));
    st->meta_values = calloc((size_t)n + 1, sizeof(char *));
    if (!st->meta_keys || !st->meta_values) return errorf(err, errlen, "%s: out of memory", src);
    const cJSON *kv;
    cJSON_ArrayForEach(kv, meta) {
        if (!cJSON_IsString(kv) || !kv->valuestring)
            return errorf(err, errlen, "%s: metadata value of '%s' is not a string", src, kv->string);
        if (st_meta(st, kv->string))
            return errorf(err, errlen, "%s: metadata key '%s' appears twice", src, kv->string);
        char *k = strdup(kv->string), *v = strdup(kv->valuestring);
        if (!k || !v) { free(k); free(v); return errorf(err, errlen, "%s: out of memory", src); }
        st->meta_keys[st->n_meta] = k;
        st->meta_values[st->n_meta] = v;
        st->n_meta++;
    }
    return 0;
}

// Byte range of one tensor inside the data section, for the overlap check.
typedef struct { size_t begin, end; int index; } Range;

static int compare_ranges(const void *a, const void *b) {
    const Range *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

static int compare_names(const void *a, const void *b) {
    const StTensor *x = a, *y = b;
    return strcmp(x->name, y->name);
}

// One header entry -> one tensor, data copied (and converted from F64).
static int parse_tensor(const cJSON *entry, const uint8_t *data, size_t data_len, StTensor *t,
                        Range *range, const char *src, char *err, size_t errlen) {
    const char *name = entry->string;
    if (!cJSON_IsObject(entry))
        return errorf(err, errlen, "%s: header entry '%s' is not an object", src, name);

    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(entry, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(entry, "shape");
    const cJSON *offsets = cJSON_GetObjectItemCaseSensitive(entry, "data_offsets");
    if (!cJSON_IsString(dtype) || !dtype->valuestring)
        return errorf(err, errlen, "%s: tensor '%s' has no string \"dtype\"", src, name);
    size_t elt;
    if (strcmp(dtype->valuestring, "F32") == 0) elt = 4;
    else if (strcmp(dtype->valuestring, "F64") == 0) elt = 8;
    else
        return errorf(err, errlen, "%s: tensor '%s' has dtype %.16s; only F32 (and F64, converted) "
                    "are supported", src, name, dtype->valuestring);

    if (!cJSON_IsArray(shape))
        return errorf(err, errlen, "%s: tensor '%s' has no \"shape\" array", src, name);
    int ndim = cJSON_GetArraySize(shape);
    if (ndim > ST_MAX_DIMS)
        return errorf(err, errlen, "%s: tensor '%s' has %d dimensions (at most %d)", src, name, ndim, ST_MAX_DIMS);

    if (!cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != 2)
        return errorf(err, errlen, "%s: tensor '%s' needs \"data_offsets\": [begin, end]", src, name);
    size_t begin, end;
    if (json_size(cJSON_GetArrayItem(offsets, 0), &begin) || json_size(cJSON_GetArrayItem(offsets, 1), &end))
        return errorf(err, errlen, "%s: tensor '%s' has data_offsets that are not non-negative integers",
                    src, name);
    if (begin > end || end > data_len)
        return errorf(err, errlen, "%s: tensor '%s' has data_offsets [%zu, %zu] outside the data section "
                    "of %zu bytes", src, name, begin, end, data_len);

    // numel = product of the shape, checked against the byte range as we go
    // so that a huge shape cannot overflow: numel never exceeds bytes / elt.
    size_t bytes = end - begin, numel = 1;
    int d = 0;
    const cJSON *dim;
    cJSON_ArrayForEach(dim, shape) {
        size_t v;
        if (json_size(dim, &v))
            return errorf(err, errlen, "%s: tensor '%s' has a shape entry that is not a non-negative integer",
                        src, name);
        if (v > (size_t)LONG_MAX)
            return errorf(err, errlen, "%s: tensor '%s' has a dimension too large", src, name);
        t->shape[d++] = (long)v;
        if (v != 0 && numel > bytes / elt / v) numel = (size_t)-1;   // more elements than bytes
        else numel *= v;
    }
    if (numel == (size_t)-1 || numel * elt != bytes)
        return errorf(err, errlen, "%s: tensor '%s': shape does not match its %zu bytes of %s data",
                    src, name, bytes, dtype->valuestring);

    t->ndim = ndim;
    t->numel = numel;
    t->data = zeroed_floats(numel);
    if (!t->data) return errorf(err, errlen, "%s: out of memory for tensor '%s' (%zu floats)", src, name, numel);
    const uint8_t *p = data + begin;
    if (elt == 4) {
        memcpy(t->data, p, bytes);   // the file's bytes may be unaligned: copy, never cast
    } else {
        for (size_t i = 0; i < numel; i++) {
            double v;
            memcpy(&v, p + 8 * i, 8);
            t->data[i] = (float)v;
        }
    }
    range->begin = begin;
    range->end = end;
    return 0;
}

// The 8-byte little-endian header length, checked against the buffer: the
// header must fit, stay under ST_MAX_HEADER and hold at least "{}".
static int read_header_length(const uint8_t *buf, size_t len, const char *src, uint64_t *out,
                              char *err, size_t errlen) {
    if (!buf && len) return errorf(err, errlen, "%s: no buffer", src);
    if (len < 8)
        return errorf(err, errlen, "%s: %zu bytes is too short for the 8-byte header length", src, len);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | buf[i];   // little-endian
    if (n > len - 8)
        return errorf(err, errlen, "%s: header length %llu is larger than the %zu bytes that follow "
                    "(truncated file?)", src, (unsigned long long)n, len - 8);
    if (n > ST_MAX_HEADER)
        return errorf(err, errlen, "%s: header length %llu is over the %u-byte limit", src,
                    (unsigned long long)n, ST_MAX_HEADER);
    if (n < 2) return errorf(err, errlen, "%s: header of %llu bytes cannot hold a JSON object",
                           src, (unsigned long long)n);
    *out = n;
    return 0;
}

// The n-byte JSON header at text (not NUL-terminated in the file) parsed;
// NULL with a message. After the JSON only padding may follow: spaces (the
// reference pads with spaces), or other JSON whitespace. A NUL byte ends
// cJSON early and is caught here too.
static cJSON *parse_header_json(const uint8_t *header, uint64_t n, const char *src, char *err, size_t errlen) {
    char *text = malloc((size_t)n + 1);
    if (!text) {
        errorf(err, errlen, "%s: out of memory for a %llu-byte header", src, (unsigned long long)n);
        return NULL;
    }
    memcpy(text, header, (size_t)n);
    text[n] = '\0';
    const char *parse_end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, (size_t)n, &parse_end, 0);
    if (!root) {
        size_t at = parse_end ? (size_t)(parse_end - text) : 0;
        errorf(err, errlen, "%s: header is not valid JSON (error near byte %zu of %llu)", src, at,
               (unsigned long long)n);
    }
    for (const char *q = parse_end; root && q < text + n; q++) {
        if (*q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') {
            errorf(err, errlen, "%s: unexpected byte 0x%02x after the JSON header (byte %zu)", src,
                   (unsigned char)*q, (size_t)(q - text));
            cJSON_Delete(root);
            root = NULL;
        }
    }
    free(text);
    return root;
}

// Every entry of the header object: __metadata__ (once) or a tensor, whose
// byte range goes into ranges[i] for the overlap check.
static int parse_entries(const cJSON *root, const uint8_t *data, size_t data_len, SafeTensors *out,
                         Range *ranges, const char *src, char *err, size_t errlen) {
    int seen_meta = 0, rc;
    const cJSON *entry;
    cJSON_ArrayForEach(entry, root) {
        if (!entry->string) return errorf(err, errlen, "%s: header entry without a name", src);
        if (strcmp(entry->string, "__metadata__") == 0) {
            if (seen_meta++) return errorf(err, errlen, "%s: __metadata__ appears twice", src);
            if ((rc = parse_metadata(entry, out, src, err, errlen))) return rc;
            continue;
        }
        StTensor *t = &out->tensors[out->n_tensors];
        t->name = strdup(entry->string);
        if (!t->name) return errorf(err, errlen, "%s: out of memory", src);
        out->n_tensors++;   // counted now so that st_free frees the name even if parsing fails
        if ((rc = parse_tensor(entry, data, data_len, t, &ranges[out->n_tensors - 1], src, err, errlen)))
            return rc;
        ranges[out->n_tensors - 1].index = out->n_tensors - 1;
    }
    return 0;
}

// Two tensors may not share bytes: sort the ranges and compare neighbours.
// Empty tensors (begin == end) hold no bytes and cannot overlap anything.
static int check_no_overlap(const SafeTensors *out, Range *ranges, const char *src, char *err, size_t errlen) {
    qsort(ranges, (size_t)out->n_tensors, sizeof(Range), compare_ranges);
    size_t prev_end = 0;
    int prev = -1;
    for (int i = 0; i < out->n_tensors; i++) {
        if (ranges[i].begin == ranges[i].end) continue;
        if (prev >= 0 && ranges[i].begin < prev_end)
            return errorf(err, errlen, "%s: tensors '%s' and '%s' overlap in the data section", src,
                          out->tensors[ranges[prev].index].name, out->tensors[ranges[i].index].name);
        prev_end = ranges[i].end;
        prev = i;
    }
    return 0;
}

// cJSON keeps duplicate keys; a file with two tensors of one name is corrupt.
// Check on a sorted copy so that a header with many tensors stays O(n log n).
static int check_unique_names(const SafeTensors *out, const char *src, char *err, size_t errlen) {
    if (out->n_tensors < 2) return 0;
    StTensor *sorted = malloc(sizeof(StTensor) * (size_t)out->n_tensors);
    if (!sorted) return errorf(err, errlen, "%s: out of memory", src);
    memcpy(sorted, out->tensors, sizeof(StTensor) * (size_t)out->n_tensors);
    qsort(sorted, (size_t)out->n_tensors, sizeof(StTensor), compare_names);
    int rc = 0;
    for (int i = 1; i < out->n_tensors && rc == 0; i++)
        if (strcmp(sorted[i - 1].name, sorted[i].name) == 0)
            rc = errorf(err, errlen, "%s: tensor '%s' appears twice", src, sorted[i].name);
    free(sorted);
    return rc;
}

static int parse_buffer(const uint8_t *buf, size_t len, const char *src, SafeTensors *out,
                        char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    uint64_t n = 0;
    if (read_header_length(buf, len, src, &n, err, errlen) != 0) return -1;
    const uint8_t *data = buf + 8 + n;
    size_t data_len = len - 8 - (size_t)n;
    cJSON *root = parse_header_json(buf + 8, n, src, err, errlen);
    if (!root) return -1;
    int rc = 0;
    Range *ranges = NULL;
    if (!cJSON_IsObject(root)) {
        rc = errorf(err, errlen, "%s: header is not a JSON object", src);
    } else {
        int n_entries = cJSON_GetArraySize(root);
        out->tensors = calloc((size_t)n_entries + 1, sizeof(StTensor));
        ranges = calloc((size_t)n_entries + 1, sizeof(Range));
        if (!out->tensors || !ranges) rc = errorf(err, errlen, "%s: out of memory", src);
    }
    if (rc == 0) rc = parse_entries(root, data, data_len, out, ranges, src, err, errlen);
    if (rc == 0) rc = check_no_overlap(out, ranges, src, err, errlen);
    if (rc == 0) rc = check_unique_names(out, src, err, errlen);
    free(ranges);
    cJSON_Delete(root);
    if (rc) st_free(out);
    return rc;
}

int st_parse(const uint8_t *buf, size_t len, SafeTensors *out, char *err, size_t errlen) {
    return parse_buffer(buf, len, "safetensors buffer", out, err, errlen);
}

int st_read(const char *path, SafeTensors *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    size_t len;
    char *buf = read_file_all(path, &len, err, errlen);   // a regular file only: a FIFO would block
    if (!buf) return -1;
    int rc = parse_buffer((const uint8_t *)buf, len, path, out, err, errlen);
    free(buf);
    return rc;
}

// ===========================================================================
// Writer

void st_writer_init(StWriter *w) { memset(w, 0, sizeof *w); }

void st_writer_free(StWriter *w) {
    for (int i = 0; i < w->n_tensors; i++) free(w->tensors[i].name);
    free(w->tensors);
    for (int i = 0; i < w->n_meta; i++) { free(w->meta_keys[i]); free(w->meta_values[i]); }
    free(w->meta_keys);
    free(w->meta_values);
    memset(w, 0, sizeof *w);
}

// Records the first error; later calls and the save report it.
static int writer_fail(StWriter *w, const char *fmt, ...) {
    if (!w->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->error, sizeof w->error, fmt, ap);
        va_end(ap);
    }
    w->failed = 1;
    return -1;
}

int st_writer_add(StWriter *w, const char *name, int ndim, const long *shape, const float *data) {
    if (!name || !*name) return writer_fail(w, "tensor without a name");
    if (strcmp(name, "__metadata__") == 0) return writer_fail(w, "'__metadata__' is not a tensor name");
    if (ndim < 0 || ndim > ST_MAX_DIMS) return writer_fail(w, "tensor '%s': %d dimensions", name, ndim);
    size_t numel = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) return writer_fail(w, "tensor '%s': negative dimension %ld", name, shape[d]);
        numel *= (size_t)shape[d];
    }
    if (numel && !data) return writer_fail(w, "tensor '%s': no data", name);
    for (int i = 0; i < w->n_tensors; i++)
        if (strcmp(w->tensors[i].name, name) == 0) return writer_fail(w, "tensor '%s' added twice", name);
    // one more entry each time: a file has hundreds, not millions
    StWriterTensor *t = realloc(w->tensors, sizeof(StWriterTensor) * ((size_t)w->n_tensors + 1));
    if (!t) return writer_fail(w, "out of memory");
    w->tensors = t;
    t += w->n_tensors;
    memset(t, 0, sizeof *t);
    t->name = strdup(name);
    if (!t->name) return writer_fail(w, "out of memory");
    t->ndim = ndim;
    for (int d = 0; d < ndim; d++) t->shape[d] = shape[d];
    t->numel = numel;
    t->data = data;
    w->n_tensors++;
    return 0;
}

int st_writer_meta(StWriter *w, const char *key, const char *value) {
    if (!key || !value) return writer_fail(w, "metadata key or value missing");
    for (int i = 0; i < w->n_meta; i++) {
        if (strcmp(w->meta_keys[i], key) == 0) {
            char *v = strdup(value);
            if (!v) return writer_fail(w, "out of memory");
            free(w->meta_values[i]);
            w->meta_values[i] = v;
            return 0;
        }
    }
    size_t grown = sizeof(char *) * ((size_t)w->n_meta + 1);   // one more, as for tensors
    char **keys = realloc(w->meta_keys, grown);
    if (!keys) return writer_fail(w, "out of memory");
    w->meta_keys = keys;
    char **values = realloc(w->meta_values, grown);
    if (!values) return writer_fail(w, "out of memory");
    w->meta_values = values;
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) { free(k); free(v); return writer_fail(w, "out of memory"); }
    w->meta_keys[w->n_meta] = k;
    w->meta_values[w->n_meta] = v;
    w->n_meta++;
    return 0;
}

// The JSON header, padded with spaces to a multiple of 8 bytes (as the
// reference does) so that the data section starts 8-byte aligned in the file.
// Returns a malloc'd string and its padded length, or NULL.
static char *build_header(const StWriter *w, size_t *out_len) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    int ok = 1;
    if (w->n_meta > 0) {
        cJSON *meta = cJSON_AddObjectToObject(root, "__metadata__");
        ok = meta != NULL;
        for (int i = 0; ok && i < w->n_meta; i++)
            ok = cJSON_AddStringToObject(meta, w->meta_keys[i], w->meta_values[i]) != NULL;
    }
    size_t offset = 0;
    for (int i = 0; ok && i < w->n_tensors; i++) {
        const StWriterTensor *t = &w->tensors[i];
        // Keys in the reference's order (dtype, shape, data_offsets), so that
        // re-saving a reference file reproduces it byte for byte.
        cJSON *e = cJSON_AddObjectToObject(root, t->name);
        ok = e && cJSON_AddStringToObject(e, "dtype", "F32");
        cJSON *shape = ok ? cJSON_AddArrayToObject(e, "shape") : NULL;
        cJSON *offs = shape ? cJSON_AddArrayToObject(e, "data_offsets") : NULL;
        ok = offs != NULL;
        for (int d = 0; ok && d < t->ndim; d++)
            ok = cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[d]));
        size_t bytes = t->numel * sizeof(float);
        ok = ok && cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)offset))
                && cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(offset + bytes)));
        offset += bytes;
    }
    char *json = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!json) return NULL;
    size_t n = strlen(json), padded = (n + 7) / 8 * 8;
    char *h = malloc(padded + 1);
    if (h) {
        memcpy(h, json, n);
        memset(h + n, ' ', padded - n);
        h[padded] = '\0';
        *out_len = padded;
    }
    free(json);
    return h;
}

int st_writer_save_atomic(StWriter *w, const char *path, char *err, size_t errlen) {
    if (w->failed) return errorf(err, errlen, "%s: not saved: %s", path, w->error);
    size_t hlen = 0;
    char *header = build_header(w, &hlen);
    FilePart *parts = malloc(sizeof(FilePart) * ((size_t)w->n_tensors + 2));
    if (!header || !parts) {
        free(header); free(parts);
        return errorf(err, errlen, "%s: cannot build the JSON header (out of memory)", path);
    }
    uint8_t lenbytes[8];
    for (int i = 0; i < 8; i++) lenbytes[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
    parts[0] = (FilePart){ lenbytes, 8 };
    parts[1] = (FilePart){ header, hlen };
    for (int i = 0; i < w->n_tensors; i++)
        parts[i + 2] = (FilePart){ w->tensors[i].data, w->tensors[i].numel * sizeof(float) };
    int rc = write_parts_atomic(path, parts, w->n_tensors + 2, err, errlen);
    free(parts);
    free(header);
    return rc;
}
