// cifar.c: reads the CIFAR-10 binary files (see cifar.h for the format).
//
// A file is read whole into memory and handed to cifar_parse_batch, so the
// bytes from disk and the bytes a fuzzer makes go through the same checks.
#include "cifar.h"
#include "args.h"
#include "nn/errors.h"
#include "fileio.h"
#include "paths.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// What to do when the data is not there. Repeated in every "missing" message
// because whoever reads the message is stuck until they know this.
#define CIFAR_HINT "get CIFAR-10 with `make data` (from the project root), or point " \
                   "CIFAR_DIR at an existing copy of cifar-10-batches-bin, e.g. "     \
                   "export CIFAR_DIR=$HOME/data/cifar-10-batches-bin"

static const char *TRAIN_FILES[CIFAR_TRAIN_FILES] = {
    "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
    "data_batch_4.bin", "data_batch_5.bin",
};
static const char *TEST_FILES[1] = { "test_batch.bin" };

const char *cifar_dir(void) {
    static char project_data[4200];
    const char *env = getenv("CIFAR_DIR");
    if (env && env[0]) return env;
    // the project's own data/ folder, wherever the program was started from
    if (!project_data[0] && project_path(project_data, sizeof project_data, "data/cifar-10-batches-bin") != 0)
        snprintf(project_data, sizeof project_data, "data/cifar-10-batches-bin");
    return project_data;
}

// Records per file: CIFAR-10's 10,000, or CIFAR_RECORDS, the size of the
// tests' small sets (tests/synth_cifar.h). Asking for it keeps the size check
// exact (a real file cut short at a record boundary is still an error), and
// it is said once on stderr, because numbers measured on such a set mean nothing.
static int records_per_file(const char *dir, int *out, char *err, size_t errlen) {
    static int told;
    const char *env = getenv("CIFAR_RECORDS");
    *out = CIFAR_RECORDS_PER_FILE;
    if (!env || !env[0]) return 0;
    if (parse_int_in(env, 1, CIFAR_RECORDS_PER_FILE, out) != 0)
        return errorf(err, errlen, "CIFAR_RECORDS=%s: expected the records per file of a small test set, "
                       "a whole number from 1 to %d; unset it to read CIFAR-10", env, CIFAR_RECORDS_PER_FILE);
    if (*out != CIFAR_RECORDS_PER_FILE && !told) {
        fprintf(stderr, "note: CIFAR_RECORDS=%d: reading %s as a small test set of %d records per file, "
                "not CIFAR-10's %d\n", *out, dir ? dir : cifar_dir(), *out, CIFAR_RECORDS_PER_FILE);
        told = 1;
    }
    return 0;
}

int cifar_parse_batch(const uint8_t *buf, size_t len, int records, const char *name,
                      uint8_t *pixels, uint8_t *labels, char *err, size_t errlen) {
    if (!name) name = "(buffer)";
    if (records <= 0)
        return errorf(err, errlen, "%s: asked for %d records; the count must be positive", name, records);
    size_t want = (size_t)records * CIFAR_RECORD_BYTES;
    if (!buf || len != want)
        return errorf(err, errlen, "%s: %zu bytes, expected %zu (%d records of %d bytes): truncated or "
                       "incomplete download, or not a CIFAR-10 binary batch file", name, buf ? len : 0, want,
                       records, CIFAR_RECORD_BYTES);
    // Check every label before writing anything, so a bad file leaves the
    // caller's arrays as they were.
    for (int r = 0; r < records; r++) {
        uint8_t label = buf[(size_t)r * CIFAR_RECORD_BYTES];
        if (label >= CIFAR_NUM_CLASSES)
            return errorf(err, errlen, "%s: record %d has label %d, but labels are 0-%d: "
                           "corrupt, or not a CIFAR-10 binary batch file (CIFAR-100 has 2 label bytes)",
                           name, r, label, CIFAR_NUM_CLASSES - 1);
    }
    for (int r = 0; r < records; r++) {
        const uint8_t *rec = buf + (size_t)r * CIFAR_RECORD_BYTES;
        labels[r] = rec[0];
        memcpy(pixels + (size_t)r * CIFAR_PIXELS, rec + 1, CIFAR_PIXELS);
    }
    return 0;
}

// One batch file of exactly `records` records (> 0) into pixels/labels (the
// caller's, as above). Fails on a missing or unreadable file (only a regular
// file: a FIFO in its place would block the read forever), a wrong size or a
// bad label.
static int cifar_read_file(const char *path, int records, uint8_t *pixels, uint8_t *labels,
                           char *err, size_t errlen) {
    size_t len;
    char why[CIFAR_ERRLEN / 2];
    uint8_t *buf = (uint8_t *)read_file_all(path, &len, why, sizeof why);
    if (!buf) return errorf(err, errlen, "%s; expected a CIFAR-10 batch file; %s", why, CIFAR_HINT);
    int rc = cifar_parse_batch(buf, len, records, path, pixels, labels, err, errlen);
    free(buf);
    return rc;
}

void cifar_free(CifarSet *s) {
    if (!s) return;
    free(s->pixels);
    free(s->labels);
    *s = (CifarSet){ 0 };
}

int cifar_load_files(const char *dir, const char *const *names, int nfiles,
                     int records_per_file, CifarSet *out, char *err, size_t errlen) {
    *out = (CifarSet){ 0 };
    uint8_t *pixels = NULL, *labels = NULL;
    if (!dir) dir = cifar_dir();
    struct stat st;
    if (stat(dir, &st) != 0)
        return errorf(err, errlen, "CIFAR-10 directory %s not found (%s); %s", dir, strerror(errno),
                       CIFAR_HINT);
    if (!S_ISDIR(st.st_mode))
        return errorf(err, errlen, "CIFAR-10 directory %s is not a directory; %s", dir, CIFAR_HINT);
    if (nfiles <= 0 || records_per_file <= 0)
        return errorf(err, errlen, "%s: asked for %d files of %d records; both must be positive",
                       dir, nfiles, records_per_file);
    size_t n = (size_t)nfiles * (size_t)records_per_file;
    if (n > (size_t)0x7fffffff)
        return errorf(err, errlen, "%s: %zu images do not fit an int", dir, n);
    pixels = malloc(n * CIFAR_PIXELS);
    labels = malloc(n);
    if (!pixels || !labels) {
        errorf(err, errlen, "%s: out of memory for %zu images (%zu MB)", dir, n, n * CIFAR_PIXELS >> 20);
        goto fail;
    }
    for (int i = 0; i < nfiles; i++) {
        char path[4096];
        int len = snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (len < 0 || (size_t)len >= sizeof path) {
            errorf(err, errlen, "%s/%s: path too long", dir, names[i]);
            goto fail;
        }
        size_t first = (size_t)i * (size_t)records_per_file;
        if (cifar_read_file(path, records_per_file, pixels + first * CIFAR_PIXELS,
                            labels + first, err, errlen) != 0)
            goto fail;
    }
    *out = (CifarSet){ (int)n, pixels, labels };
    return 0;
fail:
    free(pixels);
    free(labels);
    return -1;
}

// The named files, each of CIFAR-10's 10,000 records or CIFAR_RECORDS.
static int load_set(const char *dir, const char *const *names, int nfiles, CifarSet *out,
                    char *err, size_t errlen) {
    int records;
    *out = (CifarSet){ 0 };
    if (records_per_file(dir, &records, err, errlen) != 0) return -1;
    return cifar_load_files(dir, names, nfiles, records, out, err, errlen);
}

int cifar_load_train(const char *dir, CifarSet *out, char *err, size_t errlen) {
    return load_set(dir, TRAIN_FILES, CIFAR_TRAIN_FILES, out, err, errlen);
}

int cifar_load_test(const char *dir, CifarSet *out, char *err, size_t errlen) {
    return load_set(dir, TEST_FILES, 1, out, err, errlen);
}

int cifar_check_config(const ModelConfig *c, const char *what, char *err, size_t errlen) {
    if (c->img != CIFAR_IMG)
        return errorf(err, errlen, "%s: img=%d, but the data is CIFAR-10, whose images are %dx%d (img=%d); "
                      "use --set img=%d", what, c->img, CIFAR_IMG, CIFAR_IMG, CIFAR_IMG, CIFAR_IMG);
    if (c->channels != CIFAR_CHANNELS)
        return errorf(err, errlen, "%s: channels=%d, but the data is CIFAR-10, whose images have %d colour "
                      "channels (channels=%d); use --set channels=%d", what, c->channels, CIFAR_CHANNELS,
                      CIFAR_CHANNELS, CIFAR_CHANNELS);
    if (c->patch < 1 || CIFAR_IMG % c->patch != 0)
        return errorf(err, errlen, "%s: patch=%d does not divide CIFAR-10's %d-pixel side (img=%d)", what,
                      c->patch, CIFAR_IMG, CIFAR_IMG);
    return 0;
}

int cifar_check_labels(const CifarSet *s, int classes, const char *what, char *err, size_t errlen) {
    if (classes <= 0) return 0;
    if (!s->labels)
        return errorf(err, errlen, "%s has no labels, and classes=%d trains a class-conditional model on "
                      "each image's label; a set without labels trains the unconditional model (classes=0)",
                      what, classes);
    for (int i = 0; i < s->n; i++)
        if (s->labels[i] >= classes)
            return errorf(err, errlen, "%s: image %d has label %d, but classes=%d knows labels 0..%d only; "
                          "set classes to the data's number of classes (CIFAR-10: classes=%d)",
                          what, i, s->labels[i], classes, classes - 1, CIFAR_NUM_CLASSES);
    return 0;
}

void cifar_image_to_float(const uint8_t *pixels, int flip, float *out) {
    // p / 127.5f - 1.0f in float, the same two float32 operations as the
    // PyTorch reference (x / 127.5 - 1 on a float32 tensor), so the two agree
    // bit for bit: 0 -> -1, 255 -> +1 exactly.
    for (int c = 0; c < CIFAR_CHANNELS; c++) {
        for (int y = 0; y < CIFAR_IMG; y++) {
            const uint8_t *row = pixels + (c * CIFAR_IMG + y) * CIFAR_IMG;
            float *orow = out + (c * CIFAR_IMG + y) * CIFAR_IMG;
            for (int x = 0; x < CIFAR_IMG; x++) {
                int src = flip ? CIFAR_IMG - 1 - x : x;   // horizontal flip: mirror columns
                orow[x] = (float)row[src] / 127.5f - 1.0f;
            }
        }
    }
}

void cifar_range_to_float(const CifarSet *s, int start, int n, float *out) {
    for (int i = 0; i < n; i++)
        cifar_image_to_float(s->pixels + (size_t)(start + i) * CIFAR_PIXELS, 0,
                             out + (size_t)i * CIFAR_PIXELS);
}

void cifar_gather(const CifarSet *s, const int *idx, const uint8_t *flip, int n, float *out) {
    for (int i = 0; i < n; i++)
        cifar_image_to_float(s->pixels + (size_t)idx[i] * CIFAR_PIXELS, flip ? flip[i] : 0,
                             out + (size_t)i * CIFAR_PIXELS);
}
