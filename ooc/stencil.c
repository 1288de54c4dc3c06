/* A 2-D 5-point Jacobi stencil over two n x n arrays of doubles that together take --bytes, --reps
 * sweeps (each reads one array and writes the other, then they swap). Prints one JSON line: the
 * total, best and mean seconds of a sweep and the bytes one sweep moves. */
#include <math.h>

#include "ooc.h"

int main(int argc, char **argv) {
    struct ooc_args a = ooc_parse(argc, argv);
    size_t n = (size_t)sqrt((double)a.bytes / (2.0 * sizeof(double)));
    if (n < 3) ooc_usage(argv[0]);
    size_t bytes = 2 * n * n * sizeof(double);
    int fd;
    double t0 = ooc_start(&a);
    double *base = ooc_alloc(&a, bytes, &fd);
    double *u = base, *v = base + n * n;
    size_t rows = (size_t)(a.block / (long long)(n * sizeof(double))); /* rows between writebacks */
    if (rows < 1) rows = 1;
    for (size_t r0 = 0; r0 < n; r0 += rows) {
        size_t r1 = r0 + rows < n ? r0 + rows : n;
        for (size_t i = r0 * n; i < r1 * n; i++) {
            u[i] = (i % n == 0) ? 1.0 : 0.0; /* a hot left edge */
            v[i] = u[i];
        }
        ooc_writeback(u + r0 * n, (r1 - r0) * n * sizeof(double), fd);
        ooc_writeback(v + r0 * n, (r1 - r0) * n * sizeof(double), fd);
    }
    double init = ooc_now() - t0;
    ooc_mark(&a, "init", "end");
    double total = 0, best = 1e300;
    for (int r = 0; r < a.reps; r++) {
        ooc_mark(&a, "stencil5", "begin");
        double t = ooc_now();
        for (size_t r0 = 1; r0 + 1 < n; r0 += rows) {
            size_t r1 = r0 + rows < n - 1 ? r0 + rows : n - 1;
            for (size_t i = r0; i < r1; i++)
                for (size_t j = 1; j + 1 < n; j++)
                    v[i * n + j] = 0.2 * (u[i * n + j] + u[(i - 1) * n + j] + u[(i + 1) * n + j] +
                                          u[i * n + j - 1] + u[i * n + j + 1]);
            ooc_writeback(v + r0 * n, (r1 - r0) * n * sizeof(double), fd);
        }
        t = ooc_now() - t;
        ooc_mark(&a, "stencil5", "end");
        total += t;
        if (t < best) best = t;
        double *w = u;
        u = v;
        v = w;
    }
    double check = u[(n / 2) * n + 1];
    ooc_mark(&a, "sync", "begin");
    double sync = ooc_sync(base, bytes, fd);
    ooc_mark(&a, "sync", "end");
    ooc_free(base, bytes, fd);
    printf("{\"program\": \"stencil\", \"bytes\": %zu, \"n\": %zu, \"reps\": %d, \"mode\": \"%s\", "
           "\"sync_block\": %lld, \"init_seconds\": %.9f, \"sync_seconds\": %.9f, \"total_seconds\": %.9f, "
           "\"check\": %.6g, \"kernels\": {\"stencil5\": {\"seconds\": %.9f, \"best\": %.9f, \"mean\": %.9f, "
           "\"pass_bytes\": %.0f}}}\n",
           bytes, n, a.reps, a.file ? "mmap" : "malloc", a.file ? a.block : 0LL, init, sync, ooc_now() - t0 - ooc_marked, check,
           total, best,
           total / a.reps, 2.0 * (n - 2) * (n - 2) * sizeof(double));
    return 0;
}
