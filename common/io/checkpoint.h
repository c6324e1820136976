// checkpoint.h: a Model saved to and loaded from a safetensors file.
//
// A checkpoint holds:
//   - every parameter under its spec name ("blocks.0.attn.qkv.weight", ...)
//   - optional extra arrays laid out like the parameters (the AdamW moments),
//     each parameter's slice under "<prefix><name>", e.g. "adamw_m.head.bias"
//   - the config in __metadata__, every field as the string config_set reads
//     back: the model's (from m->cfg) and, when the caller gives one, the
//     run's that trained it (seed, lr, batch, steps, ...); plus optional
//     trainer state (step, RNG state, ...) as more string key/values.
//   - a CRC32 of every tensor and of the metadata (checksum.h), checked by
//     every load below: a damaged file is refused with the tensor named. A
//     file saved before checksums existed has none and loads as it is.
// Reading the config starts from config_default() and applies the config
// keys found, so a file saved before a switch (qk_norm, mlp, norm, pos, bias)
// existed loads as the original block, and a file with no run (a model saved
// alone) reads the default run. Metadata keys that are not config
// fields (trainer state, the golden files' "adamw.lr", "sample.steps") are
// ignored by the config reader and left for the caller (st_meta).
#pragma once
#include <stddef.h>
#include "config_parse.h"
#include "nn/model.h"
#include "safetensors.h"

// Prefixes of the AdamW moments in a trainer's checkpoint.
#define CHECKPOINT_ADAMW_M "adamw_m."
#define CHECKPOINT_ADAMW_V "adamw_v."

// An array of m->n_params floats in the parameter layout, saved per tensor
// as prefix + tensor name.
typedef struct {
    const char *prefix;
    const float *values;
} CheckpointArray;

typedef struct {
    const char *key, *value;
} CheckpointMeta;

// Writes params, extras and metadata to path atomically (see
// st_writer_save_atomic: the old file survives any failure). extra / meta may
// be NULL when their count is 0; run may be NULL (a model alone). A meta key
// equal to a config field is an error: the config is written from m->cfg and
// run and must not be contradicted.
int checkpoint_save(const char *path, const Model *m, const RunConfig *run,
                    const CheckpointArray *extra, int n_extra,
                    const CheckpointMeta *meta, int n_meta,
                    char *err, size_t errlen);

// The config stored in a file's metadata (the model and the run), on top of
// config_default(). Fails if a config field's value does not parse or the
// result is invalid (config_validate).
int checkpoint_read_config(const char *path, Config *out, char *err, size_t errlen);
// The same from an already-read file; src names it in messages.
int checkpoint_config_from(const SafeTensors *st, const char *src, Config *out,
                           char *err, size_t errlen);

// Copies every parameter of m from the tensors named prefix + name ("" for a
// checkpoint, "param." for a golden file). Each must exist with exactly the
// model's shape; a tensor that looks like a parameter (the names model.c gives) but
// that m does not have is an error too (the metadata and the tensors
// disagree). 0 or -1 with a message.
int checkpoint_copy_params(const SafeTensors *st, const char *src, const char *prefix,
                           Model *m, char *err, size_t errlen);

// Copies an optional extra array (m->n_params floats, parameter layout) into
// dst. Returns 0 when all of it was there, 1 when none of it was (dst is left
// alone; e.g. a checkpoint without AdamW state), -1 when only part of it was
// there or a shape is wrong.
int checkpoint_copy_array(const SafeTensors *st, const char *src, const char *prefix,
                          const Model *m, float *dst, char *err, size_t errlen);

// Reads path into a Model built from its config, with its parameters loaded
// (m must not hold a model; model_free it afterwards). If st is not NULL the
// file is handed back in *st for extras and trainer metadata (st_free it);
// otherwise it is freed here.
int checkpoint_load(const char *path, Model *m, SafeTensors *st, char *err, size_t errlen);
