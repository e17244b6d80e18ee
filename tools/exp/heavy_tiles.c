/*
 * heavy_tiles.c - how many segment starts a tile of the offsets profiles holds (CPU only):
 * for seg_mark, whose window holds J*31*B/32 starts a tile and takes the rest from global
 * memory in rounds of B (two barriers each). The segmentation is the bench's and the tuner's
 * own (tuner/segdata.c's segdata_make); per tile of T elements, its starts (empty segments
 * included, as the window counts them): the mean, the largest, the share of tiles without a
 * start, the share over each window and the global rounds a tile takes on average; then
 * where the elements are by segment length: for L = 8, 32, 128, 512, 2048, 2^14, 2^17, the
 * segments longer than L (count, share of the elements), and the five longest; last, for a
 * thread per piece (a tile's segments cut to the tile, and the run open at its start, taken 32
 * a warp in order), the warp steps a tile with starts would take: a warp waits for its longest
 * piece up to LONG, and a piece over LONG takes a warp ceil(len / 32) steps.
 *
 *   cc -O2 -I. tools/exp/heavy_tiles.c build/tuner/segdata.o build/runtime/optype.o \
 *       build/tuner/data.o build/tuner/data_ref.o build/tuner/data_check.o -lm -lpthread \
 *       -o /tmp/heavy_tiles
 *   /tmp/heavy_tiles PROFILE N SEED T B   (e.g. heavy 31457280 1 2048 128)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "tuner/segdata.h"

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: heavy_tiles PROFILE N SEED T B\n");
        return 2;
    }
    int p = segdata_parse_profile(argv[1]);
    unsigned long long n = strtoull(argv[2], NULL, 0), seed = strtoull(argv[3], NULL, 0);
    unsigned long long t = strtoull(argv[4], NULL, 0), b = strtoull(argv[5], NULL, 0);
    seg_data d;
    if (p < 0 || t == 0 || b < 32 || segdata_make(p, n, seed, &d) != RT_OK) {
        fprintf(stderr, "heavy_tiles: bad profile or sizes, or out of memory\n");
        return 1;
    }
    unsigned long long nt = (n + t - 1) / t, most = 0, none = 0;
    unsigned long long *c = calloc(nt ? nt : 1, sizeof *c);
    if (!c) {
        fprintf(stderr, "heavy_tiles: out of memory\n");
        return 1;
    }
    for (unsigned long long s = 0; s < d.nseg; s++)   /* starts at n: the last block's */
        if (d.off[s] < n)
            c[d.off[s] / t]++;
    for (unsigned long long i = 0; i < nt; i++) {
        most = c[i] > most ? c[i] : most;
        none += c[i] == 0;
    }
    printf("%s n=%llu seed %llu: %llu segments, tiles of %llu: %llu, %.1f starts a tile on "
           "average, at most %llu, %.1f%% without a start\n", argv[1], n, seed, d.nseg, t, nt,
           (double)d.nseg / (double)nt, most, 100.0 * (double)none / (double)nt);
    for (unsigned int j = 1; j <= 16; j *= 2) {
        unsigned long long w = j * 31 * b / 32, over = 0;
        double rounds = 0;
        for (unsigned long long i = 0; i < nt; i++)
            if (c[i] > w) {
                over++;
                rounds += ceil((double)(c[i] - w) / (double)b);
            }
        printf("  J=%-2u window %5llu: %5.1f%% of the tiles over it, %.2f rounds from global "
               "memory a tile\n", j, w, 100.0 * (double)over / (double)nt, rounds / (double)nt);
    }
    unsigned long long top[5] = {0};
    for (unsigned long long s = 0; s < d.nseg; s++) {
        unsigned long long len = d.off[s + 1] - d.off[s];
        for (int k = 0; k < 5; k++)
            if (len > top[k]) {
                unsigned long long x = top[k];
                top[k] = len;
                len = x;
            }
    }
    printf("  the five longest: %llu %llu %llu %llu %llu elements\n", top[0], top[1], top[2],
           top[3], top[4]);
    for (unsigned long long l = 8; l <= 1ull << 17; l *= l < 2048 ? 4 : 8) {
        unsigned long long cnt = 0, el = 0;
        for (unsigned long long s = 0; s < d.nseg; s++)
            if (d.off[s + 1] - d.off[s] > l) {
                cnt++;
                el += d.off[s + 1] - d.off[s];
            }
        printf("  longer than %6llu: %8llu segments, %5.1f%% of the elements\n", l, cnt,
               n ? 100.0 * (double)el / (double)n : 0.0);
    }
    for (unsigned long long lg = 8; lg <= 64; lg *= 2) {
        double steps = 0, over = 0;
        unsigned long long with = 0, s = 0;
        for (unsigned long long a = 0; a < n; a += t) {
            unsigned long long b = a + t < n ? a + t : n, k = 0, wmax = 0, prev = a;
            while (s < d.nseg && d.off[s] < a)
                s++;
            if (s >= d.nseg || d.off[s] >= b)
                continue;
            with++;
            /* piece 0: [a, first start); then each start's piece to the next start or b */
            for (unsigned long long q = s; ; q++) {
                unsigned long long hi = q < d.nseg && d.off[q] < b ? d.off[q] : b;
                unsigned long long len = hi - prev;
                if (len > lg) {
                    steps += ceil((double)len / 32.0);
                    over += ceil((double)len / 32.0);
                } else if (len > wmax) {
                    wmax = len;
                }
                if (++k % 32 == 0) {
                    steps += (double)wmax;
                    wmax = 0;
                }
                if (hi >= b)
                    break;
                prev = hi;
            }
            steps += (double)wmax;
        }
        printf("  a thread a piece, LONG %2llu: %.1f warp steps a tile with starts (%.1f of "
               "them over LONG), %.1f%% of the tiles with starts\n", lg,
               with ? steps / (double)with : 0.0, with ? over / (double)with : 0.0,
               nt ? 100.0 * (double)with / (double)nt : 0.0);
    }
    free(c);
    segdata_free(&d);
    return 0;
}
