// cifar.h: the CIFAR-10 binary loader.
//
// The binary version of CIFAR-10 is six files of 10,000 records each:
// data_batch_1.bin ... data_batch_5.bin (the 50,000 training images) and
// test_batch.bin (10,000). One record is 3,073 bytes: a label byte (0-9), then
// the 1,024 red, 1,024 green and 1,024 blue bytes of a 32x32 image, each plane
// row-major. So a record minus its label byte is already the (3, 32, 32)
// layout the model wants.
//
// Memory: the images stay as bytes (50,000 x 3,072 = 150 MB) and become
// floats x = p / 127.5 - 1 only when a batch is made (as floats the training
// set would be 600 MB, and the conversion costs nothing next to a step).
// Errors as nn/errors.h: 0, or -1 with a message naming the file.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "nn/config.h"

#define CIFAR_IMG 32
#define CIFAR_CHANNELS 3
#define CIFAR_PIXELS (CIFAR_CHANNELS * CIFAR_IMG * CIFAR_IMG)   // 3,072 bytes
#define CIFAR_RECORD_BYTES (1 + CIFAR_PIXELS)                    // 3,073 bytes
#define CIFAR_RECORDS_PER_FILE 10000
#define CIFAR_TRAIN_FILES 5
#define CIFAR_NUM_CLASSES 10
#define CIFAR_ERRLEN 1024   // a buffer this big holds any message of this module

// A set of images as stored on disk, minus the label bytes.
typedef struct {
    int n;             // number of images
    uint8_t *pixels;   // (n, 3, 32, 32) raw bytes 0..255
    uint8_t *labels;   // (n) class 0..9, or NULL: a set without labels
} CifarSet;

// Where the data is: $CIFAR_DIR if set and not empty (as given, so that a
// typo gives an error naming it), else the project's data/cifar-10-batches-bin
// where `make data` puts it, wherever the program was started from.
const char *cifar_dir(void);

// One batch file already in memory, of exactly `records` records, into the
// caller's pixels (records, 3072) and labels (records); `name` names it in
// messages. Fails on a length that is not records * 3,073 bytes or a label
// over 9, never reading outside buf[0, len): the fuzz target's entry point.
int cifar_parse_batch(const uint8_t *buf, size_t len, int records, const char *name,
                      uint8_t *pixels, uint8_t *labels, char *err, size_t errlen);

// The files `names` (nfiles, in order) from `dir` into one set of
// nfiles * records_per_file images; on failure *out is left empty. The
// loaders below use it, and the tests with small generated files.
int cifar_load_files(const char *dir, const char *const *names, int nfiles,
                     int records_per_file, CifarSet *out, char *err, size_t errlen);

// The 50,000 training images (data_batch_1..5, in order) or the 10,000 test
// images; dir NULL means cifar_dir(). For tests, CIFAR_RECORDS=n asks for
// files of exactly n records (a small synthetic set; a note on stderr says so).
int cifar_load_train(const char *dir, CifarSet *out, char *err, size_t errlen);
int cifar_load_test(const char *dir, CifarSet *out, char *err, size_t errlen);

void cifar_free(CifarSet *s);

// Does a model of config c take CIFAR-10's images as they are (img 32,
// channels 3, a patch that divides 32)? Every loader writes 3,072 floats an
// image into buffers the config sizes, so a mismatch would write past them.
// `what` names where c comes from ("--set", a checkpoint's path).
int cifar_check_config(const ModelConfig *c, const char *what, char *err, size_t errlen);

// Do the set's labels fit a class-conditional model of `classes` classes
// (0: the unconditional model reads none)? The set must have labels, each
// below classes; the message names the set (`what`) and the first misfit.
int cifar_check_labels(const CifarSet *s, int classes, const char *what, char *err, size_t errlen);

// One image's bytes (3, 32, 32) to floats x = p / 127.5 - 1 in [-1, 1],
// mirrored left-right if flip is non-zero.
void cifar_image_to_float(const uint8_t *pixels, int flip, float *out);

// A sample's float x back to a byte: p = (x + 1)·127.5, clamped to
// [0, 255] and rounded (a picture of samples: samples.png, the steps' grids).
static inline uint8_t cifar_pixel_byte(float x) {
    float p = (x + 1.0f) * 127.5f;
    return (uint8_t)(p < 0 ? 0 : p > 255 ? 255 : p + 0.5f);
}

// Images start .. start+n-1 to floats, out (n, 3, 32, 32), for evaluation.
void cifar_range_to_float(const CifarSet *s, int start, int n, float *out);

// Images idx[0..n-1] to floats, out (n, 3, 32, 32), image i mirrored if
// flip && flip[i].
void cifar_gather(const CifarSet *s, const int *idx, const uint8_t *flip, int n, float *out);
