// dataloader.c: epochs of shuffled, randomly mirrored training images
// (see dataloader.h for why the state is what it is).
#include "dataloader.h"
#include "nn/errors.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Salts for the loader's two kinds of stream. A trainer will likely seed its
// own Rng (noise, timesteps) with the same run seed; without a salt the flip
// coin would be the very numbers that make the noise, and the two would be
// correlated.
#define SALT_FLIP 0x464C495000000000ULL   // "FLIP"
#define SALT_PERM 0x5045524D00000000ULL   // "PERM"

// A seed for stream k of kind `salt`, scrambled from the run's seed with two
// SplitMix64 outputs so that nearby seeds or nearby k give unrelated streams.
static uint64_t derive_seed(uint64_t seed, uint64_t salt, uint64_t k) {
    Rng r;
    rng_seed(&r, seed ^ salt);
    uint64_t a = rng_u64(&r);
    rng_seed(&r, a ^ k);
    return rng_u64(&r);
}

// The order of dl->epoch: Fisher-Yates from the identity, with an Rng that
// depends on (seed, epoch) only. Starting from the identity (not from last
// epoch's order) is what lets a restored loader rebuild it directly.
static void build_perm(DataLoader *dl) {
    int n = dl->data->n;
    Rng r;
    rng_seed(&r, derive_seed(dl->seed, SALT_PERM, (uint64_t)dl->epoch));
    for (int i = 0; i < n; i++) dl->perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(&r, (uint32_t)i + 1);   // j uniform in [0, i]
        int t = dl->perm[i];
        dl->perm[i] = dl->perm[j];
        dl->perm[j] = t;
    }
}

int dataloader_init(DataLoader *dl, const CifarSet *data, uint64_t seed, bool flip, int classes,
                    char *err, size_t errlen) {
    memset(dl, 0, sizeof *dl);
    if (!data || data->n <= 0 || !data->pixels)
        return errorf(err, errlen, "dataloader: no images to load from");
    if (cifar_check_labels(data, classes, "the training set", err, errlen) != 0) return -1;
    dl->perm = malloc(sizeof(int) * (size_t)data->n);
    if (!dl->perm)
        return errorf(err, errlen, "dataloader: out of memory for a permutation of %d", data->n);
    dl->data = data;   // epoch 0, position 0
    dl->classes = classes;
    dl->flip = flip;
    dl->seed = seed;
    rng_seed(&dl->rng, derive_seed(seed, SALT_FLIP, 0));
    build_perm(dl);
    return 0;
}

void dataloader_free(DataLoader *dl) {
    free(dl->perm);
    dl->perm = NULL;
}

void dataloader_next(DataLoader *dl, int B, float *x, int *y, int *idx, uint8_t *flipped) {
    int n = dl->data->n;
    for (int b = 0; b < B; b++) {
        // The epoch rolls over lazily, when its first image is asked for: a
        // state saved right at the end of an epoch (pos == n) stays valid.
        if (dl->pos >= n) {
            dl->epoch++;
            dl->pos = 0;
            build_perm(dl);
        }
        int i = dl->perm[dl->pos++];
        // The coin is tossed only when flipping is on, so flip=false draws nothing.
        uint8_t f = dl->flip ? (rng_uniform(&dl->rng) < 0.5f) : 0;
        cifar_image_to_float(dl->data->pixels + (size_t)i * CIFAR_PIXELS, f,
                             x + (size_t)b * CIFAR_PIXELS);
        if (y) y[b] = dl->classes > 0 ? dl->data->labels[i] : -1;
        if (idx) idx[b] = i;
        if (flipped) flipped[b] = f;
    }
}

DataLoaderState dataloader_get_state(const DataLoader *dl) {
    return (DataLoaderState){ dl->seed, dl->epoch, dl->pos, dl->rng.state, dl->rng.has_spare, dl->rng.spare };
}

int dataloader_set_state(DataLoader *dl, const DataLoaderState *s, char *err, size_t errlen) {
    int n = dl->data->n;
    if (s->epoch < 0 || s->pos < 0 || s->pos > n)
        return errorf(err, errlen, "dataloader: saved state (epoch %d, position %d) does not fit "
                       "a set of %d images", s->epoch, s->pos, n);
    dl->seed = s->seed;
    dl->epoch = s->epoch;
    dl->pos = s->pos;
    dl->rng = (Rng){ s->rng_state, s->rng_has_spare, s->rng_spare };
    build_perm(dl);
    return 0;
}

int dataloader_state_format(const DataLoaderState *s, char *out, size_t outlen) {
    uint32_t spare_bits;
    memcpy(&spare_bits, &s->rng_spare, sizeof spare_bits);
    int len = snprintf(out, outlen, "seed=%" PRIu64 " epoch=%d pos=%d rng=0x%016" PRIx64
                       " spare=%d:0x%08" PRIx32, s->seed, s->epoch, s->pos, s->rng_state,
                       s->rng_has_spare ? 1 : 0, spare_bits);
    return (len < 0 || (size_t)len >= outlen) ? -1 : 0;
}

int dataloader_state_parse(const char *text, DataLoaderState *s, char *err, size_t errlen) {
    // NULL: the key was missing (st_meta of a checkpoint without it)
    if (!text)
        return errorf(err, errlen, "dataloader: no saved state (the checkpoint has no train.data)");
    uint64_t seed, rng_state;
    int epoch, pos, has_spare, consumed = 0;
    uint32_t spare_bits;
    int got = sscanf(text, "seed=%" SCNu64 " epoch=%d pos=%d rng=0x%" SCNx64 " spare=%d:0x%" SCNx32 "%n",
                     &seed, &epoch, &pos, &rng_state, &has_spare, &spare_bits, &consumed);
    if (got != 6 || text[consumed] != '\0' || (has_spare != 0 && has_spare != 1))
        return errorf(err, errlen, "dataloader: cannot parse state \"%s\"; expected e.g. "
                       "\"seed=0 epoch=3 pos=1280 rng=0x9e3779b97f4a7c15 spare=0:0x00000000\"", text);
    *s = (DataLoaderState){ seed, epoch, pos, rng_state, has_spare, 0.0f };
    memcpy(&s->rng_spare, &spare_bits, sizeof spare_bits);
    return 0;
}
