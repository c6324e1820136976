// checksum.h: CRC32 checksums that let a safetensors file notice damage.
//
// safetensors has none: a flipped bit loads as a slightly different weight.
// So a checkpoint carries, in its __metadata__ (that any reader keeps):
//     "crc32.<tensor name>"   the CRC32 (zlib's crc32) of the tensor's float32
//                             data as stored, 8 hex digits
//     "crc32.__metadata__"    the CRC32 of every other metadata entry (key,
//                             NUL, value, NUL, in sorted key order), so that
//                             a flipped digit of the step or the config shows
// A file with no "crc32." entry (older, or another tool's) is accepted as it
// is; a file with any must have them all.
#pragma once
#include <stddef.h>
#include "safetensors.h"

#define ST_CRC_PREFIX "crc32."
#define ST_CRC_METADATA_KEY "crc32.__metadata__"

// Adds the entries above to w, after all its tensors and metadata.
int st_writer_add_checksums(StWriter *w);

// 0 when a read file's checksums all match or it has none; -1 with a message
// naming the damaged tensor (or the metadata) otherwise.
int st_verify_checksums(const SafeTensors *st, const char *src, char *err, size_t errlen);

// How many "crc32." entries the file has.
int st_checksum_count(const SafeTensors *st);
