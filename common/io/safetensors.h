// safetensors.h: read and write the safetensors format, the checkpoint and
// golden-file format shared with the PyTorch reference (tools/tinydit_ref.py).
//
// A file is:
//     8 bytes   N, the header length, unsigned little-endian
//     N bytes   JSON header (padded with spaces), mapping each tensor name to
//               {"dtype": "F32", "shape": [d0, d1, ...], "data_offsets": [begin, end]}
//               plus an optional "__metadata__": {"key": "value", ...} (strings only)
//     the rest  raw little-endian tensor data; begin/end are byte offsets
//               relative to the start of this data section.
//
// The reader trusts nothing in the file: a truncated, corrupt or hostile
// file gives -1 and a message, never a crash or an out-of-bounds read. It
// keeps F32 tensors and converts F64 ones; the data is copied into 64-byte
// aligned memory that the SafeTensors owns.
#pragma once
#include <stddef.h>
#include <stdint.h>

#define ST_MAX_DIMS 8

typedef struct {
    char *name;
    int ndim;                    // 0 for a scalar
    long shape[ST_MAX_DIMS];
    size_t numel;                // product of shape (1 for a scalar)
    float *data;                 // (numel) floats, 64-byte aligned, owned
} StTensor;

typedef struct {
    int n_tensors;
    StTensor *tensors;           // in file (header) order
    int n_meta;
    char **meta_keys, **meta_values;
} SafeTensors;

// Reads a whole file, or a buffer in memory (the fuzz target's entry
// point). 0, or -1 with a message and *out left empty.
int st_read(const char *path, SafeTensors *out, char *err, size_t errlen);
int st_parse(const uint8_t *buf, size_t len, SafeTensors *out, char *err, size_t errlen);

// NULL when absent; st_need also when it has not numel values (numel 0:
// any), with a message naming src.
const StTensor *st_find(const SafeTensors *st, const char *name);
const StTensor *st_need(const SafeTensors *st, const char *src, const char *name, size_t numel,
                        char *err, size_t errlen);
const char *st_meta(const SafeTensors *st, const char *key);

void st_free(SafeTensors *st);

// ---------------------------------------------------------------------------
// Writer. Collects tensors and metadata, then writes them in one go. Tensor
// data is NOT copied: it must stay alive and unchanged until the save. An
// error of st_writer_add / st_writer_meta is remembered, and the save fails
// with it, so a caller may add many tensors and check once.

typedef struct {
    char *name;
    int ndim;
    long shape[ST_MAX_DIMS];
    size_t numel;
    const float *data;           // borrowed
} StWriterTensor;

typedef struct {
    int n_tensors;
    StWriterTensor *tensors;
    int n_meta;
    char **meta_keys, **meta_values;
    int failed;                  // an add/meta call went wrong; see error
    char error[256];
} StWriter;

void st_writer_init(StWriter *w);
int st_writer_add(StWriter *w, const char *name, int ndim, const long *shape, const float *data);
// Adds or replaces a metadata entry.
int st_writer_meta(StWriter *w, const char *key, const char *value);

// Writes the file atomically (write_parts_atomic, io/fileio.h): path holds
// the old file or the complete new one, never a torn one. 0 or -1.
int st_writer_save_atomic(StWriter *w, const char *path, char *err, size_t errlen);

void st_writer_free(StWriter *w);
