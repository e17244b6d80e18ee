/*
 * ship_out.c - writing an output whole or not at all: into a file of the output's directory
 * that has no name until it is complete (O_TMPFILE; a dot-named temporary file where the
 * filesystem has none), then linked (or, with 'force', renamed over an existing output) into
 * place, so that a killed command never leaves a half file under the output's name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ship.h"
#include "store_tune.h"

/* Write data[0..len) to a file of dir that has no name yet (O_TMPFILE), else to a new
 * dot-named one whose name goes into tmp; the open descriptor, or -1 with errno set. */
static int open_unnamed(const char *dir, const char *base, char *tmp, size_t tmplen)
{
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    tmp[0] = '\0';
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
    if (snprintf(tmp, tmplen, "%s/.%s.XXXXXX", dir, base) >= (int)tmplen) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkstemp(tmp);
    if (fd < 0)
        tmp[0] = '\0';
    else
        fchmod(fd, 0644);
    return fd;
}

/*
 * The output 'path' may be written (store_check_output): a regular file, or none. A
 * symbolic link, even to a regular file, is refused rather than followed or replaced: the
 * output is renamed into place whole, which replaces the link itself, and writing through it
 * instead would give up writing whole (a FIFO or a terminal) or write outside the directory
 * named; the message says to name the target. The same goes for every other kind of file.
 */
int store_check_output(const char *path, int force, const char *const *in, int nin,
                       rt_err *e)
{
    struct stat out, st;

    if (!path || !*path)
        return rt_seterr(e, RT_EINVAL, "no output file");
    if (lstat(path, &out) == 0) {
        if (S_ISLNK(out.st_mode))
            return rt_seterr(e, RT_EIO, "%s: is a symbolic link: an output is not written "
                             "through one (name the file it points to, or remove the link)",
                             path);
        if (S_ISDIR(out.st_mode))
            return rt_seterr(e, RT_EIO, "%s: is a directory", path);
        if (!S_ISREG(out.st_mode))
            return rt_seterr(e, RT_EIO, "%s: not a regular file: an output is written whole "
                             "into a new file and renamed into place", path);
        for (int i = 0; i < nin; i++)
            if (in[i] && stat(in[i], &st) == 0 && st.st_dev == out.st_dev
                && st.st_ino == out.st_ino)
                return rt_seterr(e, RT_EIO, "%s: is the input %s (the same file): write the "
                                 "output elsewhere", path, in[i]);
        if (!force)
            return rt_seterr(e, RT_EIO, "%s: exists (--force overwrites it)", path);
    }
    return store_check_dir(path, e);
}

int store_write_file(const char *path, const void *data, size_t len, int force, rt_err *e)
{
    return store_write_output(path, data, len, force, NULL, 0, e);
}

int store_write_output(const char *path, const void *data, size_t len, int force,
                       const char *const *in, int nin, rt_err *e)
{
    char dir[PATH_MAX], tmp[PATH_MAX + 32], via[64];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    const char *p = data;
    int fd, rc = RT_OK;

    if (!*base)
        return rt_seterr(e, RT_EINVAL, "%s: not a file name", path);
    if (!slash)
        strcpy(dir, ".");
    else if (snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path)
             >= (int)sizeof dir)
        return rt_seterr(e, RT_EIO, "%s: path too long", path);
    if ((rc = store_check_output(path, force, in, nin, e)) != RT_OK)
        return rc;
    if ((fd = open_unnamed(dir, base, tmp, sizeof tmp)) < 0)
        return rt_seterr(e, RT_EIO, "%s: cannot create a file in %s: %s", path, dir,
                         strerror(errno));
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            rc = rt_seterr(e, RT_EIO, "%s: write: %s", path, strerror(errno));
            goto done;
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0) {
        rc = rt_seterr(e, RT_EIO, "%s: fsync: %s", path, strerror(errno));
        goto done;
    }
    if (!tmp[0]) {
        /* Give the unnamed file a name: the output's, or (to replace it) a temporary one. */
        snprintf(via, sizeof via, "/proc/self/fd/%d", fd);
        if (!force) {
            if (linkat(AT_FDCWD, via, AT_FDCWD, path, AT_SYMLINK_FOLLOW) != 0)
                rc = rt_seterr(e, RT_EIO, "%s: %s", path, errno == EEXIST
                               ? "exists (--force overwrites it)" : strerror(errno));
            goto done;
        }
        snprintf(tmp, sizeof tmp, "%s/.%s.%ld", dir, base, (long)getpid());
        unlink(tmp);
        if (linkat(AT_FDCWD, via, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) != 0) {
            rc = rt_seterr(e, RT_EIO, "%s: cannot create %s: %s", path, tmp, strerror(errno));
            tmp[0] = '\0';
            goto done;
        }
    }
    if (force ? rename(tmp, path) != 0 : link(tmp, path) != 0)
        rc = rt_seterr(e, RT_EIO, "%s: %s", path, errno == EEXIST
                       ? "exists (--force overwrites it)" : strerror(errno));
    else if (force)
        tmp[0] = '\0';   /* renamed: nothing left to remove */
done:
    if (tmp[0])
        unlink(tmp);
    close(fd);
    if (rc == RT_OK && (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
        fsync(fd);   /* the new name, on disk */
        close(fd);
    }
    return rc;
}
