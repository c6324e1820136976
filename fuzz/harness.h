// fuzz/harness.h: what each fuzz target does with one input.
//
// Three parsers read bytes that a person or a disk can get wrong:
//   safetensors  st_parse: checkpoints and golden files (and, as `train
//                --resume` does, the config and trainer state in the metadata)
//   cifar        cifar_parse_batch: the CIFAR-10 binary batch files
//   config       config_set: every `--set key=value` of every program
// Each function below takes one input, runs it through the parser and then
// through whatever a caller would do next with the result, and calls
// abort() if an invariant breaks (so libFuzzer reports it like a crash).
//
// The same functions are compiled twice: by clang with libFuzzer and the
// sanitizers (fuzz/fuzz_*.c, `make fuzz`), and by gcc into a Check test
// that replays the seed corpus and every input that once crashed
// (tests/test_fuzz_corpus.c), so a fixed bug stays fixed in `make check`.
#pragma once
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/cifar.h"
#include "io/config_parse.h"
#include "train/dataloader.h"
#include "io/safetensors.h"

// Like assert, but never compiled out: a broken invariant is a finding.
#define FUZZ_CHECK(cond)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond,       \
                    __FILE__, __LINE__);                                        \
            abort();                                                            \
        }                                                                       \
    } while (0)

// An error message must be a terminated, non-empty string within its buffer.
static inline void fuzz_check_message(const char *err, size_t errlen) {
    FUZZ_CHECK(memchr(err, '\0', errlen) != NULL);
    FUZZ_CHECK(err[0] != '\0');
}

// Counts the fields config_foreach_field lists.
static inline void fuzz_count_field(const char *key, const char *value, void *ctx) {
    (void)key;
    (void)value;
    (*(int *)ctx)++;
}

// ---------------------------------------------------------------------------
// safetensors: st_parse, then read every tensor and metadata entry back, then
// feed the metadata to the parsers that `train --resume` feeds it to.
static inline int fuzz_safetensors_one(const uint8_t *data, size_t size) {
    SafeTensors st;
    char err[512];
    err[0] = '\0';
    if (st_parse(data, size, &st, err, sizeof err) != 0) {
        fuzz_check_message(err, sizeof err);
        // the failed parse left nothing to free
        FUZZ_CHECK(st.n_tensors == 0 && st.tensors == NULL && st.n_meta == 0);
        st_free(&st);
        return 0;
    }
    // Every tensor: the shape's product is numel, the data is readable to
    // its last float (ASan checks the reads), and st_find finds it.
    double sum = 0.0;
    for (int i = 0; i < st.n_tensors; i++) {
        const StTensor *t = &st.tensors[i];
        FUZZ_CHECK(t->name != NULL && t->data != NULL);
        FUZZ_CHECK(t->ndim >= 0 && t->ndim <= ST_MAX_DIMS);
        size_t numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            FUZZ_CHECK(t->shape[d] >= 0);
            numel *= (size_t)t->shape[d];
        }
        FUZZ_CHECK(numel == t->numel);
        FUZZ_CHECK(((uintptr_t)t->data & 63) == 0);
        FUZZ_CHECK(t->numel * sizeof(float) <= size);   // no tensor bigger than its file
        for (size_t j = 0; j < t->numel; j++) sum += t->data[j];
        FUZZ_CHECK(st_find(&st, t->name) == t);         // names are unique
    }
    for (int i = 0; i < st.n_meta; i++)
        FUZZ_CHECK(st_meta(&st, st.meta_keys[i]) == st.meta_values[i]);

    // The config in the metadata, as checkpoint_config_from reads it.
    Config c = config_default();
    for (int i = 0; i < st.n_meta; i++) {
        size_t kl = strlen(st.meta_keys[i]), vl = strlen(st.meta_values[i]);
        char *kv = malloc(kl + vl + 2);
        FUZZ_CHECK(kv != NULL);
        memcpy(kv, st.meta_keys[i], kl);
        kv[kl] = '=';
        memcpy(kv + kl + 1, st.meta_values[i], vl + 1);
        if (config_set(&c, kv, err, sizeof err) != 0) fuzz_check_message(err, sizeof err);
        free(kv);
    }
    if (config_validate(&c, err, sizeof err) != 0) fuzz_check_message(err, sizeof err);

    // The data order of `train --resume`, on a set of 5 blank images. Called
    // like the trainer calls it, even when the key is missing (NULL): that
    // once crashed `train --resume` (fuzz/regressions/safetensors/).
    {
        DataLoaderState ds;
        if (dataloader_state_parse(st_meta(&st, "train.data"), &ds, err, sizeof err) == 0) {
            static uint8_t pixels[5 * CIFAR_PIXELS], labels[5];
            CifarSet set = { 5, pixels, labels };
            DataLoader dl;
            FUZZ_CHECK(dataloader_init(&dl, &set, 0, true, 0, err, sizeof err) == 0);
            if (dataloader_set_state(&dl, &ds, err, sizeof err) == 0) {
                static float x[7 * CIFAR_PIXELS];
                int idx[7];
                dataloader_next(&dl, 7, x, NULL, idx, NULL);
                for (int b = 0; b < 7; b++) FUZZ_CHECK(idx[b] >= 0 && idx[b] < 5);
            } else {
                fuzz_check_message(err, sizeof err);
            }
            dataloader_free(&dl);
        } else {
            fuzz_check_message(err, sizeof err);
        }
    }
    st_free(&st);
    return sum != sum;   // use the sum so the reads are not optimised away
}

// ---------------------------------------------------------------------------
// cifar: the first byte chooses the record count, the rest is the file.
//   bit 7 clear: records = (byte % 4) + 1, usually the wrong length for the
//                rest, which must be refused;
//   bit 7 set:   records = the number of whole records in the rest (at least
//                1), so the length often fits and the labels get checked.
static inline int fuzz_cifar_one(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t *buf = data + 1;
    size_t len = size - 1;
    int records;
    if (data[0] & 0x80) {
        records = (int)(len / CIFAR_RECORD_BYTES);
        if (records < 1) records = 1;
        if (records > 64) records = 64;
    } else {
        records = data[0] % 4 + 1;
    }
    // Exactly sized arrays, with a canary byte after each, so ASan (or the
    // canary, without ASan) sees any write past the records asked for.
    uint8_t *pixels = malloc((size_t)records * CIFAR_PIXELS + 1);
    uint8_t *labels = malloc((size_t)records + 1);
    FUZZ_CHECK(pixels && labels);
    memset(pixels, 0xAB, (size_t)records * CIFAR_PIXELS + 1);
    memset(labels, 0xAB, (size_t)records + 1);
    char err[CIFAR_ERRLEN];
    err[0] = '\0';
    int rc = cifar_parse_batch(buf, len, records, "fuzz.bin", pixels, labels, err, sizeof err);
    FUZZ_CHECK(pixels[(size_t)records * CIFAR_PIXELS] == 0xAB && labels[records] == 0xAB);
    if (rc == 0) {
        FUZZ_CHECK(len == (size_t)records * CIFAR_RECORD_BYTES);
        for (int r = 0; r < records; r++) {
            const uint8_t *rec = buf + (size_t)r * CIFAR_RECORD_BYTES;
            FUZZ_CHECK(labels[r] == rec[0] && labels[r] < CIFAR_NUM_CLASSES);
            FUZZ_CHECK(memcmp(pixels + (size_t)r * CIFAR_PIXELS, rec + 1, CIFAR_PIXELS) == 0);
        }
        // and the floats a batch is made of stay in [-1, 1]
        float x[CIFAR_PIXELS];
        cifar_image_to_float(pixels, 1, x);
        for (int i = 0; i < CIFAR_PIXELS; i++) FUZZ_CHECK(x[i] >= -1.0f && x[i] <= 1.0f);
    } else {
        fuzz_check_message(err, sizeof err);
        FUZZ_CHECK(strstr(err, "fuzz.bin") != NULL);   // the message names the file
        // a refused file leaves the caller's arrays as they were
        for (int r = 0; r < records; r++) FUZZ_CHECK(labels[r] == 0xAB);
    }
    free(pixels);
    free(labels);
    return 0;
}

// ---------------------------------------------------------------------------
// config: the input is lines of key=value, applied in order to one Config
// like a command line full of --set. Then: a config that validates must
// survive its own metadata round trip (what a checkpoint stores must read
// back to the same config), and describing or printing it must not crash.

typedef struct {
    Config *c;
    int failed;
    char err[1024];
} FuzzRoundTrip;

static inline void fuzz_apply_field(const char *key, const char *value, void *ctx) {
    FuzzRoundTrip *rt = ctx;
    char kv[256];
    int n = snprintf(kv, sizeof kv, "%s=%s", key, value);
    FUZZ_CHECK(n > 0 && (size_t)n < sizeof kv);
    if (config_set(rt->c, kv, rt->err, sizeof rt->err) != 0) {
        fprintf(stderr, "round trip: %s refused: %s\n", kv, rt->err);
        rt->failed = 1;
    }
}

static inline int fuzz_config_one(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;   // a command line, not a file
    char *text = malloc(size + 1);
    FUZZ_CHECK(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    Config c = config_default();
    char err[1024], tiny[8];
    int line_no = 0;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        // alternate a roomy and a tiny error buffer: messages must truncate
        char *e = (line_no++ & 1) ? tiny : err;
        size_t el = (e == tiny) ? sizeof tiny : sizeof err;
        e[0] = '\0';
        Config before;
        memcpy(&before, &c, sizeof c);   // padding too: compared with memcmp
        if (config_set(&c, line, e, el) != 0) {
            fuzz_check_message(e, el);
            // a refused value changes nothing
            FUZZ_CHECK(memcmp(&before, &c, sizeof c) == 0);
        }
    }
    free(text);

    int fields = 0;
    config_foreach_field(&c, fuzz_count_field, &fields);
    FUZZ_CHECK(fields > 0);
    char desc[1024], small[16];
    config_describe(&c, desc, sizeof desc);
    config_describe(&c, small, sizeof small);
    FUZZ_CHECK(memchr(small, '\0', sizeof small) != NULL);
    static FILE *devnull;
    if (!devnull) devnull = fopen("/dev/null", "w");
    if (devnull) config_print_keys(&c, devnull);

    if (config_validate(&c, err, sizeof err) != 0) {
        fuzz_check_message(err, sizeof err);
        return 0;
    }
    // What config_validate promises the model: every size it allocates with
    // fits in an int. In double, so that checking cannot overflow.
    FUZZ_CHECK(cfg_mlp_hidden(&c.model) >= 1);
    FUZZ_CHECK((double)c.model.img * c.model.img * c.model.channels <= INT_MAX);
    FUZZ_CHECK((double)c.model.channels * c.model.patch * c.model.patch * c.model.dim <= INT_MAX);
    FUZZ_CHECK((double)c.model.dim * 4 <= INT_MAX);
    FUZZ_CHECK((double)cfg_mlp_hidden(&c.model) * c.model.dim <= INT_MAX);
    FUZZ_CHECK(cfg_head_dim(&c.model) >= 1 && cfg_tokens(&c.model) >= 1);
    // the checkpoint round trip: every field as printed, set on the defaults
    Config back = config_default();
    FuzzRoundTrip rt = { &back, 0, "" };
    config_foreach_field(&c, fuzz_apply_field, &rt);
    FUZZ_CHECK(!rt.failed);
    char desc2[1024];
    config_describe(&back, desc2, sizeof desc2);
    if (strcmp(desc, desc2) != 0) fprintf(stderr, "round trip:\n  %s\n  %s\n", desc, desc2);
    FUZZ_CHECK(strcmp(desc, desc2) == 0);
    FUZZ_CHECK(memcmp(&c, &back, sizeof c) == 0);
    return 0;
}
