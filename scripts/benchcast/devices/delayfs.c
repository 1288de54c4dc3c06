/* delayfs: a FUSE passthrough file system that adds a fixed latency to every read, every write and
 * every fsync/fdatasync before answering, so that a directory on a fast device behaves like a
 * slower device with a known per-request latency (no device-mapper dm-delay needed).
 *
 *   delayfs BACKING_DIR MOUNTPOINT -o read_delay_ns=N,write_delay_ns=N,sync_delay_ns=N[,stats=FILE]
 *
 * Requests are served by several threads (fuse's multi-threaded loop), so concurrent requests are
 * delayed in parallel, as a device with internal parallelism would. The delay runs to an absolute
 * deadline on CLOCK_MONOTONIC taken when the request arrived: a sleep (timer slack 1 ns) aimed
 * early by the wake-up lateness seen so far, or, for delays shorter than that, polling the clock. The kernel's writeback cache
 * is on: buffered writes reach the file system (and are delayed) at writeback or fsync, as on a
 * block device; direct I/O and page-cache misses reach it at once. Built by benchcast with the system compiler:
 *   cc -O2 -Wall delayfs.c $(pkg-config fuse3 --cflags --libs) -o delayfs
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

struct delays {
    long read_delay_ns;
    long write_delay_ns;
    long sync_delay_ns;
    char *stats;
};

static struct delays cfg;
static int backing_fd = -1;

/* Requests served, for whoever wants to know what an application did to the device: a file
 * (option stats=PATH) holding these six little-endian uint64 counters, mapped shared and updated
 * atomically, so a reader sees them without asking the server. */
struct counters {
    uint64_t reads, read_bytes, writes, write_bytes, syncs, version;
};
static struct counters local_counts, *counts = &local_counts;

static void count(uint64_t *counter, uint64_t n)
{
    __atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

#define OPT(t, p) {t, offsetof(struct delays, p), 0}
static const struct fuse_opt opts[] = {
    OPT("read_delay_ns=%ld", read_delay_ns),
    OPT("write_delay_ns=%ld", write_delay_ns),
    OPT("sync_delay_ns=%ld", sync_delay_ns),
    OPT("stats=%s", stats),
    FUSE_OPT_END,
};

/* A sleeping thread wakes up late (measured ~60-80 us on a 2-core VM). A delay longer than the
 * lateness seen so far (a running average over all requests) sleeps until its deadline less that
 * lateness, so it ends at the deadline on average without using the CPU, as waiting for a device
 * does not; a shorter delay polls the clock instead (a sleep could not be that short). */
static long late_ns = 50000; /* running average of the wake-up lateness, updated without locks */

static struct timespec plus(const struct timespec *t, long ns)
{
    struct timespec r = *t;
    r.tv_nsec += ns % 1000000000L;
    r.tv_sec += ns / 1000000000L + r.tv_nsec / 1000000000L;
    r.tv_nsec %= 1000000000L;
    return r;
}

static long minus(const struct timespec *a, const struct timespec *b)
{
    return (a->tv_sec - b->tv_sec) * 1000000000L + (a->tv_nsec - b->tv_nsec);
}

/* Wait until about ``ns`` after ``start``. */
static void delay_from(const struct timespec *start, long ns)
{
    if (ns <= 0)
        return;
    struct timespec now;
    long early = __atomic_load_n(&late_ns, __ATOMIC_RELAXED);
    if (ns <= early) {
        struct timespec end = plus(start, ns);
        do
            clock_gettime(CLOCK_MONOTONIC, &now);
        while (minus(&end, &now) > 0);
        return;
    }
    struct timespec wake = plus(start, ns - early);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL) == EINTR)
        ;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long late = minus(&now, &wake);
    __atomic_store_n(&late_ns, early + (late - early) / 16, __ATOMIC_RELAXED);
}

/* Paths arrive as "/a/b"; the backing directory is open as backing_fd: "a/b" relative to it. */
static const char *rel(const char *path)
{
    while (*path == '/')
        path++;
    return *path ? path : ".";
}

static int writeback;

static void *dfs_init(struct fuse_conn_info *conn, struct fuse_config *fc)
{
    /* Buffered writes stay in the page cache until writeback or fsync, as on any device: without
     * this, FUSE would send (and delay) every write() at once. */
    if (conn->capable & FUSE_CAP_WRITEBACK_CACHE) {
        conn->want |= FUSE_CAP_WRITEBACK_CACHE;
        writeback = 1;
    }
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    fc->use_ino = 1;
    /* keep file contents cached across opens, as a block device's file system does: this server is
     * the only way to the files, so the cache cannot go stale */
    fc->kernel_cache = 1;
    fc->entry_timeout = 1.0;
    fc->attr_timeout = 1.0;
    fc->negative_timeout = 0;
    return NULL;
}

static int dfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    int r = fi ? fstat(fi->fh, st) : fstatat(backing_fd, rel(path), st, AT_SYMLINK_NOFOLLOW);
    return r == -1 ? -errno : 0;
}

static int dfs_access(const char *path, int mask)
{
    return faccessat(backing_fd, rel(path), mask, 0) == -1 ? -errno : 0;
}

static int dfs_readlink(const char *path, char *buf, size_t size)
{
    ssize_t n = readlinkat(backing_fd, rel(path), buf, size - 1);
    if (n == -1)
        return -errno;
    buf[n] = '\0';
    return 0;
}

static int dfs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void)off; (void)fi; (void)flags;
    int fd = openat(backing_fd, rel(path), O_RDONLY | O_DIRECTORY);
    if (fd == -1)
        return -errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -errno;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st = {0};
        st.st_ino = e->d_ino;
        st.st_mode = (mode_t)e->d_type << 12;
        if (fill(buf, e->d_name, &st, 0, 0))
            break;
    }
    closedir(d);
    return 0;
}

static int dfs_mknod(const char *path, mode_t mode, dev_t rdev)
{
    return mknodat(backing_fd, rel(path), mode, rdev) == -1 ? -errno : 0;
}

static int dfs_mkdir(const char *path, mode_t mode)
{
    return mkdirat(backing_fd, rel(path), mode) == -1 ? -errno : 0;
}

static int dfs_unlink(const char *path)
{
    return unlinkat(backing_fd, rel(path), 0) == -1 ? -errno : 0;
}

static int dfs_rmdir(const char *path)
{
    return unlinkat(backing_fd, rel(path), AT_REMOVEDIR) == -1 ? -errno : 0;
}

static int dfs_symlink(const char *from, const char *to)
{
    return symlinkat(from, backing_fd, rel(to)) == -1 ? -errno : 0;
}

static int dfs_rename(const char *from, const char *to, unsigned int flags)
{
    return renameat2(backing_fd, rel(from), backing_fd, rel(to), flags) == -1 ? -errno : 0;
}

static int dfs_link(const char *from, const char *to)
{
    return linkat(backing_fd, rel(from), backing_fd, rel(to), 0) == -1 ? -errno : 0;
}

static int dfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    int r = fi ? fchmod(fi->fh, mode) : fchmodat(backing_fd, rel(path), mode, 0);
    return r == -1 ? -errno : 0;
}

static int dfs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    int r = fi ? fchown(fi->fh, uid, gid)
               : fchownat(backing_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);
    return r == -1 ? -errno : 0;
}

static int dfs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    if (fi)
        return ftruncate(fi->fh, size) == -1 ? -errno : 0;
    int fd = openat(backing_fd, rel(path), O_WRONLY);
    if (fd == -1)
        return -errno;
    int r = ftruncate(fd, size) == -1 ? -errno : 0;
    close(fd);
    return r;
}

static int dfs_utimens(const char *path, const struct timespec ts[2], struct fuse_file_info *fi)
{
    int r = fi ? futimens(fi->fh, ts) : utimensat(backing_fd, rel(path), ts, AT_SYMLINK_NOFOLLOW);
    return r == -1 ? -errno : 0;
}

/* O_DIRECT is honoured by the kernel side of FUSE (no page cache for this open); the backing file
 * is opened without it, so any block size works on any backing file system. */
static int open_flags(int flags)
{
    flags &= ~O_DIRECT;
    if (writeback) {
        /* the kernel reads pages to fill partly written ones and keeps appends in order itself */
        if ((flags & O_ACCMODE) == O_WRONLY)
            flags = (flags & ~O_ACCMODE) | O_RDWR;
        flags &= ~O_APPEND;
    }
    return flags;
}

static int dfs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    int fd = openat(backing_fd, rel(path), open_flags(fi->flags) | O_CREAT, mode);
    if (fd == -1)
        return -errno;
    fi->fh = fd;
    return 0;
}

static int dfs_open(const char *path, struct fuse_file_info *fi)
{
    int fd = openat(backing_fd, rel(path), open_flags(fi->flags));
    if (fd == -1)
        return -errno;
    fi->fh = fd;
    return 0;
}

/* One read or write: the I/O on the backing file, counted, then the delay from its arrival. */
static int delayed_io(ssize_t (*io)(int, void *, size_t, off_t), int fd, void *buf, size_t size,
                      off_t off, uint64_t *requests, uint64_t *bytes, long delay_ns)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    ssize_t n = io(fd, buf, size, off);
    int err = errno;
    count(requests, 1);
    count(bytes, (uint64_t)(n > 0 ? n : 0));
    delay_from(&start, delay_ns);
    return n == -1 ? -err : (int)n;
}

static ssize_t pwrite_io(int fd, void *buf, size_t size, off_t off)
{
    return pwrite(fd, buf, size, off);
}

static int dfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path;
    return delayed_io(pread, fi->fh, buf, size, off, &counts->reads, &counts->read_bytes,
                      cfg.read_delay_ns);
}

static int dfs_write(const char *path, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    (void)path;
    return delayed_io(pwrite_io, fi->fh, (void *)buf, size, off, &counts->writes,
                      &counts->write_bytes, cfg.write_delay_ns);
}

static int dfs_statfs(const char *path, struct statvfs *st)
{
    (void)path;
    return fstatvfs(backing_fd, st) == -1 ? -errno : 0;
}

static int dfs_flush(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    int fd = dup(fi->fh); /* close a duplicate: what close() of the FUSE file would report */
    if (fd == -1)
        return -errno;
    return close(fd) == -1 ? -errno : 0;
}

static int dfs_release(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    close(fi->fh);
    return 0;
}

static int dfs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)path;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int r = datasync ? fdatasync(fi->fh) : fsync(fi->fh);
    int err = errno;
    count(&counts->syncs, 1);
    delay_from(&start, cfg.sync_delay_ns);
    return r == -1 ? -err : 0;
}

static int dfs_opendir(const char *path, struct fuse_file_info *fi)
{
    int fd = openat(backing_fd, rel(path), O_RDONLY | O_DIRECTORY);
    if (fd == -1)
        return -errno;
    fi->fh = fd;
    return 0;
}

static int dfs_releasedir(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    close(fi->fh);
    return 0;
}

static int dfs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
    return dfs_fsync(path, datasync, fi);
}

static int dfs_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
    (void)path;
    return fallocate(fi->fh, mode, off, len) == -1 ? -errno : 0;
}

static off_t dfs_lseek(const char *path, off_t off, int whence, struct fuse_file_info *fi)
{
    (void)path;
    off_t r = lseek(fi->fh, off, whence);
    return r == -1 ? -errno : r;
}

static const struct fuse_operations ops = {
    .init = dfs_init,
    .getattr = dfs_getattr,
    .access = dfs_access,
    .readlink = dfs_readlink,
    .opendir = dfs_opendir,
    .readdir = dfs_readdir,
    .releasedir = dfs_releasedir,
    .fsyncdir = dfs_fsyncdir,
    .mknod = dfs_mknod,
    .mkdir = dfs_mkdir,
    .symlink = dfs_symlink,
    .unlink = dfs_unlink,
    .rmdir = dfs_rmdir,
    .rename = dfs_rename,
    .link = dfs_link,
    .chmod = dfs_chmod,
    .chown = dfs_chown,
    .truncate = dfs_truncate,
    .utimens = dfs_utimens,
    .create = dfs_create,
    .open = dfs_open,
    .read = dfs_read,
    .write = dfs_write,
    .statfs = dfs_statfs,
    .flush = dfs_flush,
    .release = dfs_release,
    .fsync = dfs_fsync,
    .fallocate = dfs_fallocate,
    .lseek = dfs_lseek,
};

int main(int argc, char *argv[])
{
    if (argc < 3 || argv[1][0] == '-') {
        fprintf(stderr, "usage: %s BACKING_DIR MOUNTPOINT [fuse options] "
                        "[-o read_delay_ns=N,write_delay_ns=N,sync_delay_ns=N]\n", argv[0]);
        return 2;
    }
    backing_fd = open(argv[1], O_RDONLY | O_DIRECTORY);
    if (backing_fd == -1) {
        fprintf(stderr, "delayfs: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    /* drop BACKING_DIR: the remaining arguments are fuse's (MOUNTPOINT and options) */
    argv[1] = argv[0];
    struct fuse_args args = FUSE_ARGS_INIT(argc - 1, argv + 1);
    if (fuse_opt_parse(&args, &cfg, opts, NULL) == -1)
        return 2;
    if (cfg.read_delay_ns < 0 || cfg.write_delay_ns < 0 || cfg.sync_delay_ns < 0) {
        fprintf(stderr, "delayfs: delays must not be negative\n");
        return 2;
    }
    if (cfg.stats) {
        int fd = open(cfg.stats, O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd == -1 || ftruncate(fd, sizeof(struct counters)) == -1) {
            fprintf(stderr, "delayfs: stats=%s: %s\n", cfg.stats, strerror(errno));
            return 2;
        }
        void *m = mmap(NULL, sizeof(struct counters), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            fprintf(stderr, "delayfs: stats=%s: mmap: %s\n", cfg.stats, strerror(errno));
            return 2;
        }
        close(fd);
        counts = m;
        counts->version = 1;
    }
    umask(0);
    int r = fuse_main(args.argc, args.argv, &ops, NULL);
    fuse_opt_free_args(&args);
    return r;
}
