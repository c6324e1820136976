// dataloader.h: the order in which training images are seen.
//
// Each epoch is a fresh random permutation of all n images (Fisher-Yates),
// and each image is mirrored left-right with probability 1/2 (if flip is on).
// Batches are cut from this stream of images back to back, so a batch may
// straddle an epoch boundary: with n = 50,000 and B = 128 the 391st batch
// takes the last 80 images of epoch 0 and the first 48 of epoch 1. No image
// is dropped or repeated within an epoch, and every batch has exactly B.
//
// Resuming: the whole state is a handful of integers (DataLoaderState), and
// restored it gives exactly the batches the original run would have had: the
// permutation of epoch e is drawn from an Rng seeded from (seed, e) alone,
// and the flips' Rng state is saved as is. All is drawn on one thread.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "io/cifar.h"
#include "nn/rng.h"

typedef struct {
    uint64_t seed;        // the loader's seed (the run's seed)
    int epoch;            // the epoch the next image comes from, from 0
    int pos;              // images of that epoch already handed out, 0..n
    uint64_t rng_state;   // the flip stream (Rng.state)
    int rng_has_spare;    // Rng's cached Box-Muller normal: unused by the
    float rng_spare;      // loader, saved anyway so the Rng is restored whole
} DataLoaderState;

typedef struct {
    const CifarSet *data; // the images (borrowed, not freed by the loader)
    int classes;          // > 0: each image's label is handed out too, checked below this
    bool flip;            // mirror each image with probability 1/2
    uint64_t seed;
    int epoch, pos;       // as in DataLoaderState
    Rng rng;              // the flip stream
    int *perm;            // (n) the order of the current epoch
} DataLoader;

// The loader at the start of epoch 0; with classes > 0 it hands out each
// image's label too (cifar_check_labels). -1 with a message on an empty set,
// labels that do not fit, or no memory.
int dataloader_init(DataLoader *dl, const CifarSet *data, uint64_t seed, bool flip, int classes,
                    char *err, size_t errlen);
void dataloader_free(DataLoader *dl);

// The next B images, x (B, 3, 32, 32) in [-1, 1], and where not NULL each
// one's label y (-1 without classes), index in the set idx, and whether it
// was mirrored. The labels draw nothing: the batches are the same without.
void dataloader_next(DataLoader *dl, int B, float *x, int *y, int *idx, uint8_t *flipped);

DataLoaderState dataloader_get_state(const DataLoader *dl);

// Continues from a saved state: the next batch is the one that followed
// when it was taken. Fails on a state of another set of images.
int dataloader_set_state(DataLoader *dl, const DataLoaderState *s, char *err, size_t errlen);

// The state as one line of text for a checkpoint's metadata, e.g.
// "seed=0 epoch=3 pos=1280 rng=0x9e3779b97f4a7c15 spare=0:0x00000000":
// all 64 bits survive (a JSON number keeps 53), the spare as its bit pattern.
#define DATALOADER_STATE_TEXT_LEN 128
int dataloader_state_format(const DataLoaderState *s, char *out, size_t outlen);
int dataloader_state_parse(const char *text, DataLoaderState *s, char *err, size_t errlen);
