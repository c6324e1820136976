// checksum.c: CRC32 checksums of a safetensors file's tensors and metadata
// (see checksum.h).
#include "checksum.h"
#include "nn/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static int is_crc_key(const char *key) {
    return strncmp(key, ST_CRC_PREFIX, strlen(ST_CRC_PREFIX)) == 0;
}

static unsigned long data_crc(const float *data, size_t numel) {
    return crc32_z(crc32_z(0L, Z_NULL, 0), (const Bytef *)data, numel * sizeof(float));
}

// Sorts indices into the key array (ctx) by key.
static int by_key(const void *a, const void *b, void *ctx) {
    char *const *keys = ctx;
    return strcmp(keys[*(const int *)a], keys[*(const int *)b]);
}

// The CRC32 of every entry but crc32.__metadata__ itself, in sorted key
// order, so that it does not depend on the order a writer chose. -1 when out
// of memory (a CRC fits in 32 bits, so -1 is never one).
static long metadata_crc(char *const *keys, char *const *values, int n) {
    int *order = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!order) return -1;
    for (int i = 0; i < n; i++) order[i] = i;
    qsort_r(order, (size_t)n, sizeof(int), by_key, (void *)keys);
    unsigned long crc = crc32_z(0L, Z_NULL, 0);
    for (int j = 0; j < n; j++) {
        int i = order[j];
        if (strcmp(keys[i], ST_CRC_METADATA_KEY) == 0) continue;
        crc = crc32_z(crc, (const Bytef *)keys[i], strlen(keys[i]) + 1);       // with its NUL
        crc = crc32_z(crc, (const Bytef *)values[i], strlen(values[i]) + 1);
    }
    free(order);
    return (long)crc;
}

int st_writer_add_checksums(StWriter *w) {
    char key[512], hex[24];
    for (int i = 0; i < w->n_tensors; i++) {
        const StWriterTensor *t = &w->tensors[i];
        if (snprintf(key, sizeof key, "%s%s", ST_CRC_PREFIX, t->name) >= (int)sizeof key) {
            w->failed = 1;
            snprintf(w->error, sizeof w->error, "a tensor name is too long for its checksum key");
            return -1;
        }
        snprintf(hex, sizeof hex, "%08lx", data_crc(t->data, t->numel));
        if (st_writer_meta(w, key, hex) != 0) return -1;
    }
    long crc = metadata_crc(w->meta_keys, w->meta_values, w->n_meta);
    if (crc < 0) {
        w->failed = 1;
        snprintf(w->error, sizeof w->error, "out of memory");
        return -1;
    }
    snprintf(hex, sizeof hex, "%08lx", (unsigned long)crc);
    return st_writer_meta(w, ST_CRC_METADATA_KEY, hex);
}

// A stored checksum: exactly 8 hex digits. -1 if it is not one.
static long parse_crc(const char *s) {
    if (!s || strlen(s) != 8 || strspn(s, "0123456789abcdef") != 8) return -1;
    return (long)strtoul(s, NULL, 16);
}

int st_checksum_count(const SafeTensors *st) {
    int n_crc = 0;
    for (int i = 0; i < st->n_meta; i++) n_crc += is_crc_key(st->meta_keys[i]);
    return n_crc;
}

int st_verify_checksums(const SafeTensors *st, const char *src, char *err, size_t errlen) {
    int n_crc = st_checksum_count(st);
    if (n_crc == 0) return 0;   // written before checksums: nothing to check against
    const char *damaged = "the file is damaged; use an intact copy or start the run again";
    long want = parse_crc(st_meta(st, ST_CRC_METADATA_KEY));
    long have = metadata_crc(st->meta_keys, st->meta_values, st->n_meta);
    if (have < 0) return errorf(err, errlen, "%s: out of memory", src);
    if (want < 0 || want != have)
        return errorf(err, errlen, "%s: the metadata fails its CRC32 check (stored %s, computed %08lx): %s", src,
                      st_meta(st, ST_CRC_METADATA_KEY) ? st_meta(st, ST_CRC_METADATA_KEY) : "none",
                      (unsigned long)have, damaged);
    char key[512];
    for (int i = 0; i < st->n_tensors; i++) {
        const StTensor *t = &st->tensors[i];
        snprintf(key, sizeof key, "%s%s", ST_CRC_PREFIX, t->name);
        long stored = parse_crc(st_meta(st, key));
        if (stored < 0)
            return errorf(err, errlen, "%s: tensor '%s' has no CRC32 in the metadata, though the file has "
                          "checksums: %s", src, t->name, damaged);
        unsigned long crc = data_crc(t->data, t->numel);
        if ((unsigned long)stored != crc)
            return errorf(err, errlen, "%s: tensor '%s' fails its CRC32 check (stored %08lx, data %08lx): %s",
                          src, t->name, (unsigned long)stored, crc, damaged);
    }
    // and no checksum of a tensor that is not there (a flipped name)
    for (int i = 0; i < st->n_meta; i++) {
        const char *k = st->meta_keys[i];
        if (!is_crc_key(k) || strcmp(k, ST_CRC_METADATA_KEY) == 0) continue;
        if (!st_find(st, k + strlen(ST_CRC_PREFIX)))
            return errorf(err, errlen, "%s: metadata has a CRC32 for tensor '%s', which the file does not "
                          "hold: %s", src, k + strlen(ST_CRC_PREFIX), damaged);
    }
    return 0;
}
