/*
 * A main() for the harnesses without libFuzzer, so that a gcc build (and the
 * GPU machine, which may have no clang) runs exactly the same harness code.
 *
 *   <harness>-replay FILE|DIR...               run each file (a DIR: each file in it)
 *   <harness>-replay -gen=SECONDS [-seed=N] [-max_len=N] [DIR|FILE...]
 *       after the replay, keep feeding generated inputs for SECONDS: random
 *       bytes, and mutations of the given files when there are any (bytes
 *       flipped, overwritten, inserted, the input cut), which reach the
 *       interesting corners much faster than noise alone. A seed over the
 *       same files draws the same inputs on any machine (folders are read in
 *       name order).
 *
 * A mismatch aborts inside the harness; to make it reproducible, each
 * generated input is first written to ./replay-current-input (or
 * $FUZZ_CRASH_FILE), and the path is printed when the harness aborts.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_INPUT = 1 << 20, MAX_CORPUS = 4096 };

typedef struct corpus {
    uint8_t *item[MAX_CORPUS];
    size_t len[MAX_CORPUS];
    size_t n;
} corpus;

static const char *crash_file = "replay-current-input";

static void on_abort(int sig)
{
    static const char msg[] = "replay: the failing input is in the file named by FUZZ_CRASH_FILE "
                              "(default ./replay-current-input)\n";
    (void)sig;
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    (void)signal(SIGABRT, SIG_DFL);
    (void)raise(SIGABRT);
}

static int read_file(const char *path, corpus *c, long *runs)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        (void)fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint8_t *buf = malloc(MAX_INPUT);
    if (buf == NULL) {
        (void)fclose(f);
        return -1;
    }
    size_t n = fread(buf, 1, MAX_INPUT, f);
    int err = ferror(f);
    (void)fclose(f);
    if (err) {
        (void)fprintf(stderr, "replay: %s: read error\n", path);
        free(buf);
        return -1;
    }
    /* exactly-sized copy, so ASan sees reads past the end of the input */
    uint8_t *in = malloc(n ? n : 1);
    if (in == NULL) {
        free(buf);
        return -1;
    }
    memcpy(in, buf, n);
    free(buf);
    (void)LLVMFuzzerTestOneInput(in, n);
    (*runs)++;
    if (c->n < MAX_CORPUS) {
        c->item[c->n] = in;
        c->len[c->n] = n;
        c->n++;
    } else {
        free(in);
    }
    return 0;
}

static int replay_path(const char *path, corpus *c, long *runs)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        (void)fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return read_file(path, c, runs);
    /* In name order, not readdir's (which follows the file system's hash of
     * the names): the corpus index is what -gen's mutations pick by, so a
     * seed must draw the same inputs on every machine. */
    struct dirent **list = NULL;
    int n = scandir(path, &list, NULL, alphasort);
    if (n < 0) {
        (void)fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char full[4096];
        const char *name = list[i]->d_name;
        int k = snprintf(full, sizeof full, "%s/%s", path, name);
        /* one level only: corpora are flat folders */
        const int take = name[0] != '.' && k > 0 && (size_t)k < sizeof full && stat(full, &st) == 0 &&
                         S_ISREG(st.st_mode);
        if (take && read_file(full, c, runs) != 0)
            rc = -1;
        free(list[i]);
    }
    free(list);
    return rc;
}

static uint64_t rng_state;

static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static size_t make_input(uint8_t *buf, size_t max_len, const corpus *c)
{
    size_t n;
    if (c->n == 0 || rng() % 4 == 0) {
        n = (size_t)(rng() % (max_len + 1));
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)rng();
        return n;
    }
    size_t pick = (size_t)(rng() % c->n);
    n = c->len[pick] < max_len ? c->len[pick] : max_len;
    memcpy(buf, c->item[pick], n);
    int edits = 1 + (int)(rng() % 8);
    for (int k = 0; k < edits; k++) {
        size_t pos = n ? (size_t)(rng() % n) : 0;
        switch (rng() % 5) {
        case 0: /* flip a bit */
            if (n)
                buf[pos] ^= (uint8_t)(1u << (rng() % 8));
            break;
        case 1: /* an interesting byte */
            if (n) {
                static const uint8_t magic[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x3c, 0x7c, 0xfe};
                buf[pos] = magic[rng() % sizeof magic];
            }
            break;
        case 2: /* insert a random byte */
            if (n < max_len) {
                memmove(buf + pos + 1, buf + pos, n - pos);
                buf[pos] = (uint8_t)rng();
                n++;
            }
            break;
        case 3: /* cut the tail */
            n = pos;
            break;
        default: /* random byte */
            if (n)
                buf[pos] = (uint8_t)rng();
            break;
        }
    }
    return n;
}

int main(int argc, char **argv)
{
    double gen_seconds = 0.0;
    uint64_t seed = (uint64_t)time(NULL);
    size_t max_len = 4096;
    corpus *c = calloc(1, sizeof *c);
    long runs = 0;
    int rc = 0;
    if (c == NULL)
        return 2;
    const char *cf = getenv("FUZZ_CRASH_FILE");
    if (cf != NULL && cf[0] != '\0')
        crash_file = cf;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "-gen=", 5) == 0)
            gen_seconds = strtod(argv[i] + 5, NULL);
        else if (strncmp(argv[i], "-seed=", 6) == 0)
            seed = strtoull(argv[i] + 6, NULL, 0);
        else if (strncmp(argv[i], "-max_len=", 9) == 0)
            max_len = (size_t)strtoull(argv[i] + 9, NULL, 0);
        else if (argv[i][0] == '-')
            (void)fprintf(stderr, "replay: ignoring option %s\n", argv[i]);
        else if (replay_path(argv[i], c, &runs) != 0)
            rc = 1;
    }
    (void)printf("replay: %ld inputs replayed\n", runs);
    if (gen_seconds > 0.0) {
        if (max_len == 0 || max_len > MAX_INPUT)
            max_len = MAX_INPUT;
        rng_state = seed;
        uint8_t *buf = malloc(MAX_INPUT);
        if (buf == NULL) {
            free(c);
            return 2;
        }
        (void)signal(SIGABRT, on_abort);
        struct timespec t0;
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        long gen = 0;
        double elapsed = 0.0;
        do {
            size_t n = make_input(buf, max_len, c);
            FILE *f = fopen(crash_file, "wb");
            if (f != NULL) {
                size_t w = fwrite(buf, 1, n, f);
                if (fclose(f) != 0 || w != n)
                    (void)fprintf(stderr, "replay: cannot save %s\n", crash_file);
            }
            uint8_t *in = malloc(n ? n : 1);
            if (in == NULL) {
                free(buf);
                free(c);
                return 2;
            }
            memcpy(in, buf, n);
            (void)LLVMFuzzerTestOneInput(in, n);
            free(in);
            gen++;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        } while (elapsed < gen_seconds);
        (void)remove(crash_file);
        (void)printf("replay: %ld generated inputs in %.1f s (%.0f exec/s), seed %llu\n", gen, elapsed,
               (double)gen / elapsed, (unsigned long long)seed);
        free(buf);
    }
    for (size_t i = 0; i < c->n; i++)
        free(c->item[i]);
    free(c);
    return rc;
}
