// checkpoint.h: a Model saved to and loaded from a safetensors file.
//
// A checkpoint holds:
//   - every parameter under its spec name ("blocks.0.attn.qkv.weight", ...)
//   - optional extra arrays laid out like the parameters (the AdamW moments),
//     each parameter's slice under "<prefix><name>", e.g. "adamw_m.head.bias"
//   - the config in __metadata__, every field as the string config_set reads
//     back (the model's, and the run's when the caller gives one), plus
//     optional trainer state (step, RNG state, ...) as more key/values
//   - a CRC32 of every tensor and of the metadata (checksum.h), checked by
//     every load below
// Reading the config starts from config_default() and applies the keys
// found, so a file saved before a switch (qk_norm, mlp, norm, pos, bias)
// existed loads as the original block; other metadata is the caller's.
#pragma once
#include <stddef.h>
#include "config_parse.h"
#include "nn/model.h"
#include "safetensors.h"

// Prefixes of the AdamW moments in a trainer's checkpoint.
#define CHECKPOINT_ADAMW_M "adamw_m."
#define CHECKPOINT_ADAMW_V "adamw_v."
// Prefix of the EMA of the weights (run key ema > 0).
#define CHECKPOINT_EMA "ema."

// An array of m->n_params floats in the parameter layout, saved per tensor
// as prefix + tensor name.
typedef struct {
    const char *prefix;
    const float *values;
} CheckpointArray;

typedef struct {
    const char *key, *value;
} CheckpointMeta;

// Writes params, extras and metadata to path atomically (extra, meta and run
// may be NULL). A meta key that is a config field is an error: the config is
// written from m->cfg and run alone.
int checkpoint_save(const char *path, const Model *m, const RunConfig *run,
                    const CheckpointArray *extra, int n_extra,
                    const CheckpointMeta *meta, int n_meta,
                    char *err, size_t errlen);

// The config stored in a file's metadata, on top of config_default(); fails
// when a value does not parse or the whole is invalid. The second reads an
// already-read file, which src names in messages.
int checkpoint_read_config(const char *path, Config *out, char *err, size_t errlen);
int checkpoint_config_from(const SafeTensors *st, const char *src, Config *out,
                           char *err, size_t errlen);

// Copies every parameter of m from the tensors named prefix + name ("" for a
// checkpoint, "param." for a golden file), each of the model's shape; a
// tensor named like a parameter that m does not have is an error too.
int checkpoint_copy_params(const SafeTensors *st, const char *src, const char *prefix,
                           Model *m, char *err, size_t errlen);

// An optional extra array (parameter layout) into dst: 0 when all of it was
// there, 1 when none of it was (dst untouched), -1 when part was or a shape
// is wrong.
int checkpoint_copy_array(const SafeTensors *st, const char *src, const char *prefix,
                          const Model *m, float *dst, char *err, size_t errlen);

// The EMA's weights of a trainer's checkpoint ("ema.<name>", run key ema >
// 0) into m's parameters. 0; 1 when it holds none (m untouched); -1 for a
// file that cannot be read or a wrong shape; a message with 1 and -1.
int checkpoint_use_ema(const char *path, Model *m, char *err, size_t errlen);

// Reads path into a Model built from its config (model_free it afterwards);
// with st, the file is handed back too (st_free it) for extras and metadata.
int checkpoint_load(const char *path, Model *m, SafeTensors *st, char *err, size_t errlen);
