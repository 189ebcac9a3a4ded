/* Fuzz the `rifl` tool's value parsers (tools/cli_opts.c, tools/cli_sweep.c,
 * built into this harness): any text, NUL-terminated, as a number, a
 * count with a suffix, a byte count, a list and a --sweep.
 *
 * - cli_parse_double: a finite number that prints and reads back the same.
 * - cli_parse_u64: plain digits exactly (refused beyond 2^64 - 1); a number
 *   followed by k, M, G, T (x1000) or Ki, Mi, Gi, Ti (x1024) taken exactly
 *   when the product is a whole number below 2^64, refused otherwise or
 *   after a minus or white space in front; every count is the same byte
 *   count to cli_parse_bytes, with or without a B, and the number
 *   cli_parse_double and cli_parse_i64 read when they take the text.
 * - cli_parse_list: the count of comma-separated elements, each the number
 *   cli_parse_double reads and within the bounds, never more than `max`
 *   written; refused exactly when an element is empty, overlong, not a
 *   number or out of range, or there are too many.
 * - cli_sweep_parse: refused with nothing to free, or keys of the option
 *   table, none fixed, none twice, at most 4, and points as documented in
 *   cli_sweep.c: a list's values as written (or the number they stand
 *   for); a range's values strictly increasing from FROM by STEP, exact
 *   for whole numbers with an added step, ending at TO within rounding;
 *   every value accepted by the option; three points applied set the
 *   options to their values.
 *
 * The tool's error messages go to stderr; the harness asks libFuzzer to
 * close it (-close_fd_mask=2, which a later flag on the command line
 * overrides), so that its own reports and the sanitizers' still show. */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static char quiet[] = "-close_fd_mask=2";
    static char **args;
    args = calloc((size_t)*argc + 2, sizeof *args);
    if (!args)
        return 0;
    args[0] = (*argv)[0];
    args[1] = quiet;
    for (int i = 1; i < *argc; i++)
        args[i + 1] = (*argv)[i];
    *argc += 1;
    *argv = args;
    return 0;
}

static uint64_t o_frames = 1000, o_bytes = 100000, o_seed = 1, o_voq = 64;
static int64_t o_offset;
static double o_ber = 1e-7, o_load = 0.5, o_cable = 10, o_gain = 1;
static bool o_fast, o_json;
static const char *o_sched = "islip", *o_size = "64", *o_sweep;

static const struct cli_opt opts[] = {
    { "frames", CLI_UINT, &o_frames, "frame slots", 0, 1e15 },
    { "bytes", CLI_BYTES, &o_bytes, "payload bytes", 0, 1e15 },
    { "seed", CLI_UINT, &o_seed, "run seed", 0, 18446744073709551615.0 },
    { "voq-cells", CLI_UINT, &o_voq, "VOQ size", 2, 1e6 },
    { "offset", CLI_INT, &o_offset, "a signed count", -1e6, 1e6 },
    { "ber", CLI_DOUBLE, &o_ber, "bit error rate", 0, 0.5 },
    { "load", CLI_DOUBLE, &o_load, "offered load", 0, 1 },
    { "cable", CLI_DOUBLE, &o_cable, "cable length, m", 0, 100000 },
    { "gain", CLI_DOUBLE, &o_gain, "any number", 0, 0 },
    { "fast", CLI_BOOL, &o_fast, "fast-forward", 0, 0 },
    { "json", CLI_FLAG, &o_json, "JSON", 0, 0 },
    { "scheduler", CLI_STRING, &o_sched, "islip or safc", 0, 0 },
    { "size", CLI_STRING, &o_size, "packet sizes (a list itself)", 0, 0 },
    { "sweep", CLI_STRING, &o_sweep, "the sweep", 0, 0 },
    CLI_END,
};
static const char *const fixed[] = { "size", "sweep", NULL };

static bool whole(enum cli_type t)
{
    return t == CLI_UINT || t == CLI_BYTES || t == CLI_INT;
}

/* ---- numbers ------------------------------------------------------------- */

/* Plain digits: exact, refused past 2^64 - 1. */
static void plain_digits(const char *s)
{
    size_t n = strlen(s);
    if (!n || strspn(s, "0123456789") != n)
        return;
    uint64_t want = 0, u;
    int over = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        over |= want > (UINT64_MAX - d) / 10;
        want = want * 10 + d;
    }
    int rc = cli_parse_u64(s, &u);
    if (over ? rc == 0 : (rc != 0 || u != want))
        __builtin_trap();
}

/* s followed by each suffix: s times the multiplier, when whole. */
static void suffixes(const char *s, int rd, double d)
{
    static const struct {
        const char *suffix;
        double mult;
    } sfx[] = { { "k", 1e3 }, { "K", 1e3 }, { "M", 1e6 }, { "m", 1e6 }, { "G", 1e9 },
                { "g", 1e9 }, { "T", 1e12 }, { "t", 1e12 }, { "Ki", 0x1p10 },
                { "Mi", 0x1p20 }, { "Gi", 0x1p30 }, { "Ti", 0x1p40 } };
    char t[80];
    size_t n = strlen(s);
    if (n + 4 > sizeof t)
        return;
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        double x = d * sfx[i].mult;
        int want = !rd && n && s[0] != '-' && !isspace((unsigned char)s[0]) && d >= 0 &&
                   x < 0x1p64 && x == floor(x);
        uint64_t u = 0, b = 0, bb = 0;
        snprintf(t, sizeof t, "%s%s", s, sfx[i].suffix);
        int ru = cli_parse_u64(t, &u), rb = cli_parse_bytes(t, &b);
        snprintf(t, sizeof t, "%s%sB", s, sfx[i].suffix);
        int rbb = cli_parse_bytes(t, &bb);
        if ((ru == 0) != want || rb != ru || rbb != ru ||
            (want && ((double)u != x || b != u || bb != u)))
            __builtin_trap();
    }
}

static void numbers(const char *s)
{
    double d = 0, d2;
    uint64_t u, b, u2;
    int64_t i;
    char t[48];
    int rd = cli_parse_double(s, &d);
    if (rd == 0) {
        snprintf(t, sizeof t, "%.17g", d);
        if (!isfinite(d) || cli_parse_double(t, &d2) || d2 != d)
            __builtin_trap();
    }
    int ru = cli_parse_u64(s, &u), rb = cli_parse_bytes(s, &b), ri = cli_parse_i64(s, &i);
    if (ru == 0) {
        /* a count is a byte count; it reads back from its decimal */
        snprintf(t, sizeof t, "%llu", (unsigned long long)u);
        if (rb || b != u || cli_parse_u64(t, &u2) || u2 != u)
            __builtin_trap();
        /* a number without a suffix: the one cli_parse_double reads */
        if (rd == 0 && (double)u != d)
            __builtin_trap();
        if (ri == 0 && (uint64_t)i != u)
            __builtin_trap();
    }
    plain_digits(s);
    suffixes(s, rd, d);
}

/* ---- lists --------------------------------------------------------------- */

static void list(const char *s, unsigned max, double lo, double hi)
{
    double *out = malloc(max * sizeof *out);
    if (!out)
        __builtin_trap();
    int k = cli_parse_list(s, out, max, lo, hi, NULL);
    /* what it should be: element by element */
    int want = *s ? 0 : -1;
    const char *p = s;
    for (unsigned j = 0; want >= 0 && *s; j++) {
        size_t n = strcspn(p, ",");
        char item[64];
        double v;
        /* (an element of 64 characters or more is refused as overlong) */
        if (n == 0 || n >= sizeof item || j >= max) {
            want = -1;
            break;
        }
        memcpy(item, p, n);
        item[n] = '\0';
        if (cli_parse_double(item, &v) || v < lo || v > hi) {
            want = -1;
            break;
        }
        if (k >= 0 && out[j] != v)
            __builtin_trap();
        want++;
        if (!p[n])
            break;
        p += n + 1;
    }
    if (k != want)
        __builtin_trap();
    free(out);
}

/* ---- sweeps -------------------------------------------------------------- */

static int whole_number(enum cli_type t, const char *s, uint64_t *v)
{
    int64_t i;
    if (t == CLI_UINT)
        return cli_parse_u64(s, v);
    if (t == CLI_BYTES)
        return cli_parse_bytes(s, v);
    if (cli_parse_i64(s, &i))
        return -1;
    *v = (uint64_t)i;
    return 0;
}

/* a bound or step as a range reads it (the option's notation) */
static int range_number(enum cli_type t, const char *s, double *v)
{
    uint64_t u;
    if (t == CLI_UINT || t == CLI_BYTES) {
        if (whole_number(t, s, &u))
            return -1;
        *v = (double)u;
        return 0;
    }
    return cli_parse_double(s, v);
}

static double value_number(enum cli_type t, const char *s)
{
    uint64_t u;
    double d;
    if (whole(t)) {
        if (whole_number(t, s, &u))
            __builtin_trap();
        return t == CLI_INT ? (double)(int64_t)u : (double)u;
    }
    if (cli_parse_double(s, &d))
        __builtin_trap();
    return d;
}

/* FROM:TO:+D of a whole-number option: every value exact */
static void whole_added(const struct cli_sweep_key *k, const char *a, const char *b,
                        const char *c)
{
    enum cli_type t = k->opt->type;
    uint64_t from, to, step, v;
    if (whole_number(t, a, &from) || whole_number(t, b, &to) || whole_number(t, c, &step) ||
        step == 0 || (to - from) / step + 1 != k->n)
        __builtin_trap();
    for (unsigned i = 0; i < k->n; i++)
        if (whole_number(t, k->vals[i], &v) || v != from + step * i)
            __builtin_trap();
}

/* the step of FROM:TO:STEP as written, and whether it multiplies */
static double range_step(enum cli_type t, const char *c, bool *mult)
{
    double step, base, ex = 1;
    *mult = *c == 'x' || *c == 'X' || *c == '*';
    if (!*mult) {
        if (range_number(t, c + (*c == '+'), &step))
            __builtin_trap();
        return step;
    }
    char *f = strdup(c + 1), *caret = f ? strchr(f, '^') : NULL;
    if (!f)
        __builtin_trap();
    if (caret)
        *caret = '\0';
    if (cli_parse_double(f, &base) || (caret && cli_parse_double(caret + 1, &ex)))
        __builtin_trap();
    free(f);
    return pow(base, ex);
}

static void range(const struct cli_sweep_key *k, char *a)
{
    enum cli_type t = k->opt->type;
    char *b = strchr(a, ':'), *c = b ? strchr(b + 1, ':') : NULL;
    if (!c || strchr(c + 1, ':'))
        __builtin_trap(); /* a range has three parts */
    *b++ = '\0';
    *c++ = '\0';
    bool mult;
    if (whole(t) && !(*c == 'x' || *c == 'X' || *c == '*')) {
        whole_added(k, a, b, c + (*c == '+'));
        return;
    }
    double from, to, step = range_step(t, c, &mult);
    if (range_number(t, a, &from) || range_number(t, b, &to) || !(to >= from) ||
        !(mult ? step > 1 && from > 0 : step > 0) || k->n < 1)
        __builtin_trap();
    double prev = -INFINITY;
    for (unsigned i = 0; i <= k->n; i++) {
        double want = mult ? from * pow(step, i) : from + step * i;
        if (i + 1 == k->n && (mult ? want > to * pow(step, 2e-9) * (1 + 1e-12)
                                    : want > to + 2e-9 * step + 1e-12 * fabs(to)))
            __builtin_trap(); /* the last value is TO at most, within rounding */
        if (i == k->n) {
            /* and the next one would be past TO */
            if (want < to - 1e-9 * (fabs(to) + (mult ? 0 : step)))
                __builtin_trap();
            break;
        }
        /* values written with 10 (added) or 6 (multiplied) digits, whole
         * numbers rounded */
        double x = value_number(t, k->vals[i]);
        double tol = whole(t) ? 0.5 + 1e-12 * want
                              : (mult ? 1e-5 * want : 1e-9 * (fabs(want) + step));
        if (!(x > prev) || fabs(x - want) > tol)
            __builtin_trap();
        prev = x;
    }
}

/* a list's values: as written, or the number they stand for */
static void listed(const struct cli_sweep_key *k, char *v)
{
    unsigned j = 0;
    for (char *p = v;; j++) {
        size_t n = strcspn(p, ",");
        char end = p[n], plain[128];
        p[n] = '\0';
        if (j >= k->n)
            __builtin_trap();
        if (strcmp(k->vals[j], p) &&
            (cli_json_number(p) || cli_canonical(k->opt, p, plain, sizeof plain) ||
             strcmp(k->vals[j], plain)))
            __builtin_trap();
        if (!end)
            break;
        p += n + 1;
    }
    if (j + 1 != k->n)
        __builtin_trap();
}

/* Points applied set the options to their values (none a string: the tool
 * keeps every string it is given). */
static void apply(const struct cli_sweep *sw)
{
    for (unsigned k = 0; k < sw->nkeys; k++)
        if (sw->key[k].opt->type == CLI_STRING)
            return;
    size_t pts[3] = { 0, sw->npoints / 2, sw->npoints - 1 };
    for (unsigned p = 0; p < 3; p++) {
        if (cli_sweep_apply(sw, pts[p], opts))
            __builtin_trap();
        for (unsigned k = 0; k < sw->nkeys; k++) {
            const struct cli_opt *o = sw->key[k].opt;
            const char *v = cli_sweep_value(sw, pts[p], k);
            if (o->type == CLI_BOOL || o->type == CLI_FLAG) {
                bool on = !strcasecmp(v, "1") || !strcasecmp(v, "true") ||
                          !strcasecmp(v, "yes") || !strcasecmp(v, "on");
                if (*(bool *)o->ptr != on)
                    __builtin_trap();
            } else if (cli_opt_number(o) != value_number(o->type, v)) {
                __builtin_trap();
            }
        }
    }
}

static void sweep(const char *s)
{
    /* forget the points applied before: nothing set */
    static char name[] = "fuzz";
    char *argv[] = { name, NULL };
    if (cli_parse(1, argv, opts, NULL, NULL, NULL, 0, NULL))
        __builtin_trap();
    struct cli_sweep sw;
    int rc = cli_sweep_parse(&sw, s, opts, fixed, " (it is fixed)");
    if (rc) {
        if (rc != 2 || sw.nkeys || sw.npoints)
            __builtin_trap();
        return;
    }
    if (sw.nkeys < 1 || sw.nkeys > CLI_SWEEP_MAX_KEYS)
        __builtin_trap();
    char *items = strdup(s), *save = NULL, *tok = items ? strtok_r(items, " \t;", &save) : NULL;
    size_t points = 1;
    for (unsigned k = 0; k < sw.nkeys; k++, tok = strtok_r(NULL, " \t;", &save)) {
        const struct cli_sweep_key *key = &sw.key[k];
        char *eq = tok ? strchr(tok, '=') : NULL;
        if (!eq || !key->opt || key->n < 1)
            __builtin_trap();
        *eq = '\0';
        if (cli_find(opts, tok) != key->opt)
            __builtin_trap(); /* the key named */
        for (const char *const *f = fixed; *f; f++)
            if (!strcmp(key->opt->name, *f))
                __builtin_trap();
        for (unsigned j = 0; j < k; j++)
            if (sw.key[j].opt == key->opt)
                __builtin_trap();
        for (unsigned j = 0; j < key->n; j++)
            if (cli_check(opts, key->opt->name, key->vals[j], "fuzz"))
                __builtin_trap();
        if (strchr(eq + 1, ':'))
            range(key, eq + 1);
        else
            listed(key, eq + 1);
        points *= key->n;
    }
    if (tok || points != sw.npoints || points > CLI_SWEEP_MAX_POINTS)
        __builtin_trap(); /* every item a key */
    free(items);
    apply(&sw);
    cli_sweep_free(&sw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        __builtin_trap();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    numbers(s);
    list(s, 8, 0, 1);
    list(s, 64, -1e300, 1e300);
    sweep(s);
    free(s);
    return 0;
}
