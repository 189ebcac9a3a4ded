/* Minimal test harness: a table of named cases, a command-line filter,
 * seeded randomness, and a closing "N passed, M failed" line.
 *
 *   static void t_something(void) { CHECK(x == 1); CHECK_EQ_U(a, b); }
 *   TEST_MAIN({"something", t_something}, ...)
 *
 * Arguments: names or name prefixes to run (default all), --long for the
 * full-length randomised runs, --seed N to change the base seed (also from
 * RIFL_TEST_SEED).  Every failed CHECK prints file:line and the expression
 * and marks the case failed; the case goes on so that one run shows all
 * failures. */
#ifndef RIFL_TESTLIB_H
#define RIFL_TESTLIB_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_case {
    const char *name;
    void (*fn)(void);
};

static int test_failed_flag;
static unsigned long test_checks;
static int test_long_run;
static uint64_t test_seed = 1;

#define CHECK(cond)                                                            \
    do {                                                                       \
        test_checks++;                                                         \
        if (!(cond)) {                                                         \
            fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);  \
            test_failed_flag = 1;                                              \
        }                                                                      \
    } while (0)

#define CHECK_MSG(cond, ...)                                                   \
    do {                                                                       \
        test_checks++;                                                         \
        if (!(cond)) {                                                         \
            fprintf(stderr, "  FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            test_failed_flag = 1;                                              \
        }                                                                      \
    } while (0)

#define CHECK_EQ_U(a, b)                                                       \
    do {                                                                       \
        unsigned long long va_ = (unsigned long long)(a);                      \
        unsigned long long vb_ = (unsigned long long)(b);                      \
        test_checks++;                                                         \
        if (va_ != vb_) {                                                      \
            fprintf(stderr, "  FAIL %s:%d: %s == %s (%llu != %llu)\n",         \
                    __FILE__, __LINE__, #a, #b, va_, vb_);                     \
            test_failed_flag = 1;                                              \
        }                                                                      \
    } while (0)

#define CHECK_EQ_I(a, b)                                                       \
    do {                                                                       \
        long long va_ = (long long)(a);                                        \
        long long vb_ = (long long)(b);                                        \
        test_checks++;                                                         \
        if (va_ != vb_) {                                                      \
            fprintf(stderr, "  FAIL %s:%d: %s == %s (%lld != %lld)\n",         \
                    __FILE__, __LINE__, #a, #b, va_, vb_);                     \
            test_failed_flag = 1;                                              \
        }                                                                      \
    } while (0)

/* Stop the current case when a precondition fails. */
#define REQUIRE(cond)                                                          \
    do {                                                                       \
        int ok_ = (cond) ? 1 : 0; /* evaluated once */                         \
        test_checks++;                                                         \
        if (!ok_) {                                                            \
            fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);  \
            test_failed_flag = 1;                                              \
            return;                                                            \
        }                                                                      \
    } while (0)

static inline int test_run_main(int argc, char **argv, const struct test_case *cases,
                                size_t ncases)
{
    const char *env = getenv("RIFL_TEST_SEED");
    if (env)
        test_seed = strtoull(env, NULL, 0);
    const char *filters[64];
    int nf = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--long"))
            test_long_run = 1;
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            test_seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--list")) {
            for (size_t k = 0; k < ncases; k++)
                printf("%s\n", cases[k].name);
            return 0;
        } else if (nf < 64)
            filters[nf++] = argv[i];
    }
    int passed = 0, failed = 0;
    printf("seed %" PRIu64 "%s\n", test_seed, test_long_run ? " (long run)" : "");
    for (size_t k = 0; k < ncases; k++) {
        int run = nf == 0;
        for (int f = 0; f < nf; f++)
            if (!strncmp(cases[k].name, filters[f], strlen(filters[f])))
                run = 1;
        if (!run)
            continue;
        test_failed_flag = 0;
        unsigned long before = test_checks;
        cases[k].fn();
        if (test_checks == before) {
            fprintf(stderr, "  FAIL %s: the case made no checks\n", cases[k].name);
            test_failed_flag = 1;
        }
        printf("%s %s\n", test_failed_flag ? "FAIL" : "ok  ", cases[k].name);
        fflush(stdout);
        if (test_failed_flag)
            failed++;
        else
            passed++;
    }
    if (passed + failed == 0) {
        fprintf(stderr, "no test matched the filter\n");
        return 2;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

#define TEST_MAIN(...)                                                         \
    int main(int argc, char **argv)                                            \
    {                                                                          \
        static const struct test_case cases_[] = { __VA_ARGS__ };              \
        return test_run_main(argc, argv, cases_,                               \
                             sizeof cases_ / sizeof cases_[0]);                \
    }

/* Read a whole file (NUL-terminated) or return NULL. */
static inline char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    long n = ftell(f);
    rewind(f);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = (size_t)n;
    }
    return buf;
}

#endif
