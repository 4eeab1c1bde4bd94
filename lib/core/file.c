/* SPDX-License-Identifier: BSD-3-Clause */
/* Durable file replacement (core_impl.h, dpdo__file_*): the discipline of SQLite's atomic
 * commit on POSIX -- write a fresh temporary file in the target's directory, fsync it, rename it
 * over the target, fsync the directory -- so that after a crash, a kill or a full disk the
 * target holds either its previous content or the new one, never a mixture, and a completed
 * call survives a power loss. docs/model.md "Durable, authenticated model files". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "core_impl.h"

/* ---- test-only write faults ------------------------------------------------------------ */
#ifdef DPDO_FAULT_INJECTION
static _Thread_local long long write_budget = -1; /* test build only */

void dpdo__fault_write_arm(long long bytes)
{
    write_budget = bytes;
}

/* how many of n bytes the simulated disk takes (0 = full: ENOSPC) */
static size_t write_allowed(size_t n)
{
    if (write_budget < 0) return n;
    size_t k = (unsigned long long)write_budget < n ? (size_t)write_budget : n;
    write_budget -= (long long)k;
    return k;
}
#else
void dpdo__fault_write_arm(long long bytes)
{
    (void)bytes;
}
#define write_allowed(n) (n)
#endif

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        size_t want = write_allowed(n);
        if (want == 0) {
            errno = ENOSPC;
            return -1;
        }
        ssize_t w = write(fd, p, want);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int dpdo__file_sync_dir(const char *path, char *err, const char *what)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 1;
    if (slash && n == 0) n = 1; /* "/file": the root */
    char *dir = dpdo__alloc(n + 1);
    if (!dir) return dpdo__err(err, DPDO_E_NOMEM, "%s: out of memory", what);
    memcpy(dir, slash ? path : ".", n);
    dir[n] = '\0';
    int rc = DPDO_OK;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL))
        /* EINVAL: a file system that cannot sync a directory (the rename is then as durable as
         * it can be made) */
        rc = dpdo__err(err, DPDO_E_IO, "%s: cannot sync the directory '%s': %s", what, dir,
                       strerror(errno));
    if (fd >= 0) close(fd);
    dpdo__free(dir);
    return rc;
}

int dpdo__file_write_synced(const char *path, const void *buf, size_t len, int excl, char *err,
                            const char *what)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (excl ? O_EXCL : O_TRUNC), 0666);
    if (fd < 0)
        return dpdo__err(err, errno == EEXIST ? DPDO_E_STATE : DPDO_E_IO,
                         "%s: cannot create '%s': %s", what, path, strerror(errno));
    int bad = write_all(fd, buf, len) != 0 || fsync(fd) != 0;
    int e = errno;
    if (close(fd) != 0 && !bad) bad = 1, e = errno;
    if (bad) {
        unlink(path);
        return dpdo__err(err, DPDO_E_IO, "%s: cannot write '%s': %s", what, path, strerror(e));
    }
    return DPDO_OK;
}

int dpdo__file_rename_synced(const char *from, const char *to, char *err, const char *what)
{
    if (rename(from, to) != 0) {
        int e = errno;
        unlink(from);
        return dpdo__err(err, DPDO_E_IO, "%s: cannot rename '%s' to '%s': %s", what, from, to,
                         strerror(e));
    }
    return dpdo__file_sync_dir(to, err, what);
}

int dpdo__file_replace(const char *path, const void *buf, size_t len, char *err, const char *what)
{
    size_t n = strlen(path);
    char *tmp = dpdo__alloc(n + 32);
    if (!tmp) return dpdo__err(err, DPDO_E_NOMEM, "%s: out of memory", what);
    int rc = DPDO_E_STATE;
    /* a fresh name (O_EXCL) beside the target: two writers never share a temporary file; the
     * mode is 0666 less the umask, as fopen would give */
    for (int attempt = 0; attempt < 8 && rc == DPDO_E_STATE; attempt++) {
        unsigned char r[6];
        randombytes_buf(r, sizeof r);
        snprintf(tmp, n + 32, "%s.tmp-%02x%02x%02x%02x%02x%02x", path, r[0], r[1], r[2], r[3], r[4],
                 r[5]);
        rc = dpdo__file_write_synced(tmp, buf, len, 1, err, what);
    }
    if (!rc) rc = dpdo__file_rename_synced(tmp, path, err, what);
    dpdo__free(tmp);
    return rc;
}

int dpdo__mac_key_set(unsigned char *dst, size_t *dst_len, const unsigned char *key, size_t len,
                      char *err)
{
    if (!key) {
        if (len != 0)
            return dpdo__err(err, DPDO_E_INVAL, "set_key: key is NULL but len = %zu", len);
        sodium_memzero(dst, 64);
        *dst_len = 0;
        return DPDO_OK;
    }
    if (len < 16 || len > 64)
        return dpdo__err(err, DPDO_E_INVAL, "set_key: key length %zu is not in [16, 64] bytes",
                         len);
    if (sodium_init() < 0)
        return dpdo__err(err, DPDO_E_UNSUPPORTED, "set_key: libsodium cannot be initialised");
    memcpy(dst, key, len);
    *dst_len = len;
    return DPDO_OK;
}
