/* The Himeno benchmark's kernel (RIKEN; the seed paper's third program): Jacobi iterations of a 3-D
 * Poisson equation with a 19-point stencil over 14 n x n x n arrays (the coefficients a[4], b[3],
 * c[3], the pressure p, the boundary mask bnd and the work arrays wrk1, wrk2) that together take
 * --bytes, --reps iterations. As in Himeno's own code, an iteration computes wrk2 from p and then
 * copies it back into p; doubles here (Himeno uses floats), so that the arrays share the other
 * programs' allocation. Prints one JSON line: the total, best and mean seconds of an iteration, the
 * bytes one iteration moves (13 arrays read and wrk2 written, then wrk2 read and p written) and the
 * residual gosa of the last iteration. */
#include <math.h>

#include "ooc.h"

#define NARRAYS 14

int main(int argc, char **argv) {
    struct ooc_args a = ooc_parse(argc, argv);
    size_t n = (size_t)cbrt((double)a.bytes / (NARRAYS * sizeof(double)));
    if (n < 3) ooc_usage(argv[0]);
    size_t cells = n * n * n, plane = n * n;
    size_t bytes = NARRAYS * cells * sizeof(double);
    int fd;
    double t0 = ooc_start(&a);
    double *base = ooc_alloc(&a, bytes, &fd);
    double *arr[NARRAYS];
    for (int q = 0; q < NARRAYS; q++) arr[q] = base + q * cells;
    double *a0 = arr[0], *a1 = arr[1], *a2 = arr[2], *a3 = arr[3], *b0 = arr[4], *b1 = arr[5], *b2 = arr[6];
    double *c0 = arr[7], *c1 = arr[8], *c2 = arr[9], *p = arr[10], *bnd = arr[11], *wrk1 = arr[12];
    double *wrk2 = arr[13];
    size_t planes = (size_t)(a.block / (long long)(plane * sizeof(double))); /* planes between writebacks */
    if (planes < 1) planes = 1;
    for (int q = 0; q < NARRAYS; q++) {
        for (size_t i = 0; i < n; i++) {
            double *x = arr[q] + i * plane;
            for (size_t m = 0; m < plane; m++) {
                switch (q) {
                case 0: case 1: case 2: case 7: case 8: case 9: case 11: x[m] = 1.0; break;
                case 3: x[m] = 1.0 / 6.0; break;
                case 10: x[m] = (double)(i * i) / (double)((n - 1) * (n - 1)); break;
                default: x[m] = 0.0;
                }
            }
            if ((i + 1) % planes == 0 || i + 1 == n) {
                size_t first = (i / planes) * planes;
                ooc_writeback(arr[q] + first * plane, (i + 1 - first) * plane * sizeof(double), fd);
            }
        }
    }
    double init = ooc_now() - t0;
    ooc_mark(&a, "init", "end");
    const double omega = 0.8;
    double total = 0, best = 1e300, gosa = 0;
#define AT(x, i, j, k) x[(i) * plane + (j) * n + (k)]
    for (int r = 0; r < a.reps; r++) {
        ooc_mark(&a, "himeno", "begin");
        double t = ooc_now();
        gosa = 0;
        size_t since = 1;
        for (size_t i = 1; i + 1 < n; i++) {
            for (size_t j = 1; j + 1 < n; j++)
                for (size_t k = 1; k + 1 < n; k++) {
                    double s0 = AT(a0, i, j, k) * AT(p, i + 1, j, k) + AT(a1, i, j, k) * AT(p, i, j + 1, k) +
                                AT(a2, i, j, k) * AT(p, i, j, k + 1) +
                                AT(b0, i, j, k) * (AT(p, i + 1, j + 1, k) - AT(p, i + 1, j - 1, k) -
                                                   AT(p, i - 1, j + 1, k) + AT(p, i - 1, j - 1, k)) +
                                AT(b1, i, j, k) * (AT(p, i, j + 1, k + 1) - AT(p, i, j - 1, k + 1) -
                                                   AT(p, i, j + 1, k - 1) + AT(p, i, j - 1, k - 1)) +
                                AT(b2, i, j, k) * (AT(p, i + 1, j, k + 1) - AT(p, i - 1, j, k + 1) -
                                                   AT(p, i + 1, j, k - 1) + AT(p, i - 1, j, k - 1)) +
                                AT(c0, i, j, k) * AT(p, i - 1, j, k) + AT(c1, i, j, k) * AT(p, i, j - 1, k) +
                                AT(c2, i, j, k) * AT(p, i, j, k - 1) + AT(wrk1, i, j, k);
                    double ss = (s0 * AT(a3, i, j, k) - AT(p, i, j, k)) * AT(bnd, i, j, k);
                    gosa += ss * ss;
                    AT(wrk2, i, j, k) = AT(p, i, j, k) + omega * ss;
                }
            if (i - since + 1 == planes || i + 2 == n) {
                ooc_writeback(wrk2 + since * plane, (i + 1 - since) * plane * sizeof(double), fd);
                since = i + 1;
            }
        }
        since = 1;
        for (size_t i = 1; i + 1 < n; i++) {
            for (size_t j = 1; j + 1 < n; j++)
                for (size_t k = 1; k + 1 < n; k++) AT(p, i, j, k) = AT(wrk2, i, j, k);
            if (i - since + 1 == planes || i + 2 == n) {
                ooc_writeback(p + since * plane, (i + 1 - since) * plane * sizeof(double), fd);
                since = i + 1;
            }
        }
        t = ooc_now() - t;
        ooc_mark(&a, "himeno", "end");
        total += t;
        if (t < best) best = t;
    }
#undef AT
    ooc_mark(&a, "sync", "begin");
    double sync = ooc_sync(base, bytes, fd);
    ooc_mark(&a, "sync", "end");
    ooc_free(base, bytes, fd);
    double inner = (double)(n - 2) * (double)(n - 2) * (double)(n - 2);
    printf("{\"program\": \"himeno\", \"bytes\": %zu, \"n\": %zu, \"reps\": %d, \"mode\": \"%s\", "
           "\"sync_block\": %lld, \"init_seconds\": %.9f, \"sync_seconds\": %.9f, \"total_seconds\": %.9f, "
           "\"check\": %.9g, \"kernels\": {\"himeno\": {\"seconds\": %.9f, \"best\": %.9f, \"mean\": %.9f, "
           "\"pass_bytes\": %.0f}}}\n",
           bytes, n, a.reps, a.file ? "mmap" : "malloc", a.file ? a.block : 0LL, init, sync, ooc_now() - t0 - ooc_marked, gosa,
           total, best, total / a.reps, 16.0 * inner * sizeof(double));
    return 0;
}
