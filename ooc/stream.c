/* STREAM's four kernels (copy, scale, add, triad; McCalpin's STREAM, rewritten for benchcast) over
 * three arrays of doubles that together take --bytes, --reps times. Prints one JSON line: per kernel
 * the total, best and mean seconds of a pass and the bytes one pass moves. */
#include "ooc.h"

int main(int argc, char **argv) {
    struct ooc_args a = ooc_parse(argc, argv);
    size_t n = (size_t)(a.bytes / (3 * (long long)sizeof(double)));
    if (n < 1) ooc_usage(argv[0]);
    size_t bytes = 3 * n * sizeof(double);
    int fd;
    double t0 = ooc_start(&a);
    double *base = ooc_alloc(&a, bytes, &fd);
    double *x = base, *y = base + n, *z = base + 2 * n;
    size_t blk = (size_t)(a.block / (long long)sizeof(double)); /* elements between writebacks */
    for (size_t s = 0; s < n; s += blk) {
        size_t e = s + blk < n ? s + blk : n;
        for (size_t i = s; i < e; i++) {
            x[i] = 1.0;
            y[i] = 2.0;
            z[i] = 0.0;
        }
        ooc_writeback(x + s, (e - s) * sizeof(double), fd);
        ooc_writeback(y + s, (e - s) * sizeof(double), fd);
        ooc_writeback(z + s, (e - s) * sizeof(double), fd);
    }
    double init = ooc_now() - t0;
    ooc_mark(&a, "init", "end");
    const char *names[4] = {"copy", "scale", "add", "triad"};
    const double moved[4] = {2.0, 2.0, 3.0, 3.0}; /* arrays read + written per element */
    double total[4] = {0}, best[4] = {1e300, 1e300, 1e300, 1e300};
    const double k = 3.0;
    for (int r = 0; r < a.reps; r++) {
        for (int j = 0; j < 4; j++) {
            ooc_mark(&a, names[j], "begin");
            double t = ooc_now();
            double *dst = j == 1 ? y : (j == 3 ? x : z);
            for (size_t s = 0; s < n; s += blk) {
                size_t e = s + blk < n ? s + blk : n;
                switch (j) {
                case 0: for (size_t i = s; i < e; i++) z[i] = x[i]; break;
                case 1: for (size_t i = s; i < e; i++) y[i] = k * z[i]; break;
                case 2: for (size_t i = s; i < e; i++) z[i] = x[i] + y[i]; break;
                default: for (size_t i = s; i < e; i++) x[i] = y[i] + k * z[i]; break;
                }
                ooc_writeback(dst + s, (e - s) * sizeof(double), fd);
            }
            t = ooc_now() - t;
            ooc_mark(&a, names[j], "end");
            total[j] += t;
            if (t < best[j]) best[j] = t;
        }
    }
    double check = x[n / 2] + y[n / 3] + z[n - 1]; /* keeps the loops from being optimised away */
    ooc_mark(&a, "sync", "begin");
    double sync = ooc_sync(base, bytes, fd);
    ooc_mark(&a, "sync", "end");
    ooc_free(base, bytes, fd);
    printf("{\"program\": \"stream\", \"bytes\": %zu, \"n\": %zu, \"reps\": %d, \"mode\": \"%s\", "
           "\"sync_block\": %lld, \"init_seconds\": %.9f, \"sync_seconds\": %.9f, \"total_seconds\": %.9f, "
           "\"check\": %.6g, \"kernels\": {",
           bytes, n, a.reps, a.file ? "mmap" : "malloc", a.file ? a.block : 0LL, init, sync, ooc_now() - t0 - ooc_marked, check);
    for (int j = 0; j < 4; j++)
        printf("%s\"%s\": {\"seconds\": %.9f, \"best\": %.9f, \"mean\": %.9f, \"pass_bytes\": %.0f}",
               j ? ", " : "", names[j], total[j], best[j], total[j] / a.reps, moved[j] * n * sizeof(double));
    printf("}}\n");
    return 0;
}
