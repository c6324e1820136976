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
// floats x = p / 127.5 - 1 only when a batch is made. As floats the training
// set would be 600 MB, for no gain: the conversion costs nothing next to a
// training step.
//
// Errors: every function that can fail returns 0 or -1 and writes a message
// into the caller's buffer (err, errlen; err may be NULL). The message names
// the file and what is wrong with it. The library never exits: a program
// decides what to do (print and exit, or try another directory).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "nn/config.h"

#define CIFAR_IMG 32
#define CIFAR_CHANNELS 3
#define CIFAR_PIXELS (CIFAR_CHANNELS * CIFAR_IMG * CIFAR_IMG)   // 3,072 bytes
#define CIFAR_RECORD_BYTES (1 + CIFAR_PIXELS)                    // 3,073 bytes
#define CIFAR_RECORDS_PER_FILE 10000
#define CIFAR_FILE_BYTES ((size_t)CIFAR_RECORDS_PER_FILE * CIFAR_RECORD_BYTES)  // 30,730,000
#define CIFAR_TRAIN_FILES 5
#define CIFAR_NUM_CLASSES 10
#define CIFAR_ERRLEN 1024   // a buffer this big holds any message of this module

// A set of images as stored on disk, minus the label bytes.
typedef struct {
    int n;             // number of images
    uint8_t *pixels;   // (n, 3, 32, 32) raw bytes 0..255
    uint8_t *labels;   // (n) class 0..9, or NULL: a set without labels
} CifarSet;

// Where the data is:
//   1. the CIFAR_DIR environment variable, if set and not empty (taken as
//      given, even if it does not exist, so a typo gives an error naming it;
//      a relative path is relative to the folder the program runs in);
//   2. otherwise the project's data/cifar-10-batches-bin, where `make data`
//      puts it, wherever the program was started from (io/paths.h).
// The returned string is static or the environment's: do not free it.
const char *cifar_dir(void);

// Parses one batch file already in memory: exactly `records` records
// (CIFAR_RECORDS_PER_FILE for the real files; tests pass small counts).
// Writes pixels (records, 3072) and labels (records), both allocated by the
// caller. `name` is only used in messages (e.g. the file's path).
// Fails on a length that is not records * 3,073 bytes or a label byte over 9;
// never reads outside buf[0, len). This is the fuzz target's entry point.
int cifar_parse_batch(const uint8_t *buf, size_t len, int records, const char *name,
                      uint8_t *pixels, uint8_t *labels, char *err, size_t errlen);

// Loads the files `names` (nfiles of them, in order) from directory `dir`
// into one set of nfiles * records_per_file images. The general loader:
// the tests use it with small generated files. On failure *out is left empty
// (n = 0, NULL arrays) and nothing leaks.
int cifar_load_files(const char *dir, const char *const *names, int nfiles,
                     int records_per_file, CifarSet *out, char *err, size_t errlen);

// The real thing: the 50,000 training images (data_batch_1..5, in order) or
// the 10,000 test images, 10,000 records per file and nothing else.
// dir NULL means cifar_dir(). The one exception is for tests: with
// CIFAR_RECORDS=n in the environment every file must hold exactly n records
// (a small synthetic set of the same layout; a note on stderr says so).
int cifar_load_train(const char *dir, CifarSet *out, char *err, size_t errlen);
int cifar_load_test(const char *dir, CifarSet *out, char *err, size_t errlen);

void cifar_free(CifarSet *s);

// Does a model of config c take CIFAR-10's images as they are? Its img must
// be 32 and its channels 3 (and its patch divide 32): every loader here
// writes 3,072 floats per image into buffers the model's config sizes, so a
// mismatch would write past them or leave them half-filled. `what` names
// where c comes from ("the options", a checkpoint's path) in the message.
// 0, or -1 with a message naming the config's value and the data's.
int cifar_check_config(const ModelConfig *c, const char *what, char *err, size_t errlen);

// Do the set's labels fit a class-conditional model of `classes` classes?
// classes = 0 (the unconditional model) reads none. Otherwise the set must
// have labels (a set made without them, labels NULL, has none) and each
// must be below classes. `what` names the set in the message. 0, or -1 with
// a message naming the first image whose label does not fit.
int cifar_check_labels(const CifarSet *s, int classes, const char *what, char *err, size_t errlen);

// One image's bytes (3, 32, 32) to floats x = p / 127.5 - 1 in [-1, 1],
// mirrored left-right if flip is non-zero.
void cifar_image_to_float(const uint8_t *pixels, int flip, float *out);

// Images start .. start+n-1 of the set to floats, out (n, 3, 32, 32).
// For evaluation, where the order is fixed (e.g. the first 2,000 test images).
void cifar_range_to_float(const CifarSet *s, int start, int n, float *out);

// Images idx[0..n-1] of the set to floats, out (n, 3, 32, 32); image i is
// mirrored if flip != NULL and flip[i] != 0.
void cifar_gather(const CifarSet *s, const int *idx, const uint8_t *flip, int n, float *out);
