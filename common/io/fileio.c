// fileio.c: see fileio.h.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "nn/errors.h"
#include "fileio.h"

int write_parts_atomic(const char *path, const FilePart *parts, int n, char *err, size_t errlen) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());   // per process: no two writers share it
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return errorf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
    for (int i = 0; i < n; i++) {
        const char *p = parts[i].data;
        size_t left = parts[i].len;
        while (left > 0) {
            ssize_t w = write(fd, p, left);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                snprintf(err, errlen, "writing %s failed: %s (nothing replaced; %s is unchanged)", tmp,
                         w < 0 ? strerror(errno) : "no space", path);
                close(fd); unlink(tmp);
                return -1;
            }
            p += w; left -= (size_t)w;
        }
    }
    // The data must be on disk before the rename makes it the file: otherwise
    // a crash could leave a renamed but empty file where the old one was.
    if (fsync(fd) != 0 || close(fd) != 0) {
        snprintf(err, errlen, "flushing %s failed: %s (%s is unchanged)", tmp, strerror(errno), path);
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    // The rename made durable too. Best effort: some file systems refuse to
    // fsync a folder, and the file is complete either way.
    char *slash = strrchr(tmp, '/');
    if (slash) *slash = '\0';
    int dir = open(slash ? tmp : ".", O_RDONLY | O_DIRECTORY);
    if (dir >= 0) { fsync(dir); close(dir); }
    return 0;
}

int write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen) {
    const FilePart whole = { data, len };
    return write_parts_atomic(path, &whole, 1, err, errlen);
}

int make_dirs(const char *path, char *err, size_t errlen) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *q = buf + 1; ; q++) {
        if (*q == '/' || *q == 0) {
            char keep = *q;
            *q = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return errorf(err, errlen, "cannot create folder %s: %s", buf, strerror(errno));
            *q = keep;
            if (!keep) break;
        }
    }
    return 0;
}

static const char *file_kind(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

FILE *fopen_regular(const char *path, char *err, size_t errlen) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
        errno = e;
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is %s, not a regular file: data is read only from files",
                 path, file_kind(st.st_mode));
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    FILE *f = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

char *read_file_all(const char *path, size_t *len, char *err, size_t errlen) {
    FILE *f = fopen_regular(path, err, errlen);
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb; cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        snprintf(err, errlen, "cannot read %s", path);
        return NULL;
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}
