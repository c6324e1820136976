// fileio.h: writing files so that nothing already saved is ever lost.
#pragma once
#include <stddef.h>
#include <stdio.h>

// Writes len bytes to path.tmp.<pid>, fsyncs, then renames over path: a
// reader sees the old file or the whole new one. Every write is checked (a full disk
// is an error, not a short file). 0, or -1 with a message naming the file.
int write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);
// The same for a file written from several pieces, in order.
typedef struct { const void *data; size_t len; } FilePart;
int write_parts_atomic(const char *path, const FilePart *parts, int n, char *err, size_t errlen);

// mkdir -p. 0 or -1 with a message.
int make_dirs(const char *path, char *err, size_t errlen);

// Reads a whole file into a malloc'd buffer with a terminating NUL (not
// counted in *len). NULL with a message on failure.
char *read_file_all(const char *path, size_t *len, char *err, size_t errlen);

int file_exists(const char *path);

// Opens path for reading, as data: only a regular file (a FIFO with no
// writer would block, a device never end); anything else is refused at once
// with a message naming what it is, errno EINVAL.
FILE *fopen_regular(const char *path, char *err, size_t errlen);
