/* Shared parts of benchcast's out-of-core programs: arguments, the arrays (malloc'd, or a shared
 * mapping of a file on the device under test), timing and the JSON result line. */
#ifndef BENCHCAST_OOC_H
#define BENCHCAST_OOC_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct ooc_args {
    long long bytes;   /* working set: every array together */
    int reps;          /* passes (STREAM: sets of the four kernels; stencil: sweeps) */
    const char *file;  /* NULL: malloc; else the arrays are a shared mapping of this file */
    long long block;   /* bytes written between two writebacks of a mapping (the paper's M_SYNC) */
    int marks;         /* --marks: stop at each phase's edges until the caller has read its counters */
};

static double ooc_now(void) {
    struct timespec ts;
    __asm__ __volatile__("" ::: "memory"); /* no load or store moves across a clock reading */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void ooc_die(const char *what) {
    fprintf(stderr, "%s: %s\n", what, strerror(errno));
    exit(2);
}

static void ooc_usage(const char *prog) {
    fprintf(stderr, "usage: %s --bytes N --reps R [--mmap FILE [--sync-block BYTES]] [--marks]\n", prog);
    exit(64);
}

static struct ooc_args ooc_parse(int argc, char **argv) {
    struct ooc_args a = {0, 0, NULL, 1 << 20, 0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bytes") && i + 1 < argc) a.bytes = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) a.reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mmap") && i + 1 < argc) a.file = argv[++i];
        else if (!strcmp(argv[i], "--sync-block") && i + 1 < argc) a.block = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--marks")) a.marks = 1;
        else ooc_usage(argv[0]);
    }
    if (a.bytes <= 0 || a.reps <= 0 || a.block < 8) ooc_usage(argv[0]);
    return a;
}

/* With --marks, an edge of a phase (init, a kernel's pass, the final sync; edge "begin" or "end"):
 * "#mark PHASE EDGE" on stdout, then wait for one byte on stdin, the caller's sign that it has read
 * the kernel's counters (paging, the device's requests). Outside every timed region: a pass's clock
 * starts after its begin mark and stops before its end mark, and the program's total leaves out the
 * time spent at marks (ooc_marked). A closed stdin lets the program go on. */
static double ooc_marked = 0.0; /* seconds spent waiting at marks: left out of the program's total */

static void ooc_mark(const struct ooc_args *a, const char *phase, const char *edge) {
    if (!a->marks) return;
    double t = ooc_now();
    printf("#mark %s %s\n", phase, edge);
    fflush(stdout);
    char c;
    while (read(0, &c, 1) < 0 && errno == EINTR) {
    }
    ooc_marked += ooc_now() - t;
}

/* The program's start: the init phase's begin mark, then the clock its total is measured from. */
static double ooc_start(const struct ooc_args *a) {
    ooc_mark(a, "init", "begin");
    ooc_marked = 0.0;
    return ooc_now();
}

/* One block of `bytes` for all the arrays: anonymous memory (malloc, may be swapped), or a file
 * mapped MAP_SHARED (its pages go to and come from the file). */
static double *ooc_alloc(const struct ooc_args *a, size_t bytes, int *fd) {
    *fd = -1;
    if (!a->file) {
        double *p = malloc(bytes);
        if (!p) ooc_die("malloc");
        return p;
    }
    *fd = open(a->file, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (*fd < 0) ooc_die(a->file);
    if (ftruncate(*fd, (off_t)bytes) != 0) ooc_die("ftruncate");
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (p == MAP_FAILED) ooc_die("mmap");
    return p;
}

/* msync(MS_SYNC) of a mapping (the paper's M_SYNC), timed; 0 for malloc'd memory. */
static double ooc_sync(void *p, size_t bytes, int fd) {
    if (fd < 0) return 0.0;
    double t = ooc_now();
    if (msync(p, bytes, MS_SYNC) != 0) ooc_die("msync");
    return ooc_now() - t;
}

/* Write back the written range [p, p + bytes) of a mapping and wait (msync MS_SYNC, widened to whole
 * pages): done after every --sync-block bytes, so that the dirty pages of a mapping never pile up
 * under the memory limit (the paper's M_SYNC; reclaim would otherwise wait on them page by page).
 * Nothing for malloc'd memory. */
static void ooc_writeback(double *p, size_t bytes, int fd) {
    if (fd < 0 || bytes == 0) return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)p & ~(page - 1);
    uintptr_t end = (uintptr_t)p + bytes;
    if (msync((void *)start, end - start, MS_SYNC) != 0) ooc_die("msync");
}

static void ooc_free(void *p, size_t bytes, int fd) {
    if (fd < 0) {
        free(p);
        return;
    }
    munmap(p, bytes);
    close(fd);
}

#endif
