/* `--sweep`: one parser for every command that runs over several values of
 * its settings (`rifl sim link`, `rifl sim switch`).
 *
 *   --sweep 'KEY=SPEC [KEY2=SPEC ...]'      keys separated by blanks or ';'
 *   SPEC = V1,V2,...                        a list (any setting)
 *        | FROM:TO:STEP                     a range (numeric settings)
 *   STEP = D or +D                          add D (D > 0)
 *        | xF or *F or xB^E                 multiply by F = B^E (F > 1, FROM > 0)
 *
 * The points are every combination of the keys' values, the last key
 * varying fastest.  Whole-number ranges with an added step are counted in
 * integers, exactly; with a factor they are rounded to whole numbers below
 * 2^53.  Other range values are written with 10 significant digits (added
 * steps) or 6 (multiplied steps), and a range repeating a value is refused.  Every value is checked against
 * the option's type and range here, before anything runs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* where --sweep was given ("option --sweep" or "FILE:LINE: sweep"), for
 * every message about it and about the points it sets */
static char origin[300] = "option --sweep";

static int sweep_err(const char *item, const char *fmt, const char *detail)
{
    fprintf(stderr, "error: %s: '%s' is not a sweep: ", origin, item);
    fprintf(stderr, fmt, detail);
    fprintf(stderr, "\n");
    return 2;
}

static const char syntax[] =
    "write KEY=V1,V2,... or KEY=FROM:TO:STEP with STEP +D (add) or xF (multiply, "
    "e.g. x10^0.25)%s";

static bool whole(enum cli_type t)
{
    return t == CLI_UINT || t == CLI_BYTES || t == CLI_INT;
}

/* a range bound or added step, in the option's own notation */
static int range_number(enum cli_type t, const char *s, double *out)
{
    if (t == CLI_UINT || t == CLI_BYTES) {
        uint64_t v;
        if (t == CLI_UINT ? cli_parse_u64(s, &v) : cli_parse_bytes(s, &v))
            return -1;
        *out = (double)v;
        return 0;
    }
    return cli_parse_double(s, out);
}

static int add_value(struct cli_sweep_key *k, const char *v, size_t cap)
{
    if (k->n == cap)
        return -1;
    k->vals[k->n] = strdup(v);
    if (!k->vals[k->n])
        return -1;
    k->n++;
    return 0;
}

/* a whole-number bound or step, exactly: CLI_INT values are kept in two's
 * complement */
static int whole_number(enum cli_type t, const char *s, uint64_t *out)
{
    if (t == CLI_UINT)
        return cli_parse_u64(s, out);
    if (t == CLI_BYTES)
        return cli_parse_bytes(s, out);
    int64_t v;
    if (cli_parse_i64(s, &v))
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static int whole_text(enum cli_type t, uint64_t v, char *buf, size_t n)
{
    if (t == CLI_INT)
        return snprintf(buf, n, "%lld", (long long)(int64_t)v);
    return snprintf(buf, n, "%llu", (unsigned long long)v);
}

static int too_many(const char *item, double count)
{
    char n[64];
    snprintf(n, sizeof n, "%.3g points, at most %d", count, CLI_SWEEP_MAX_POINTS);
    return sweep_err(item, "the range gives %s; use a larger step", n);
}

/* FROM:TO:+D of a whole-number setting: every value exact, whatever its
 * size (a seed near 2^64 stays that seed) */
static int whole_added_range(struct cli_sweep_key *k, const char *item, const char *from_s,
                             const char *to_s, const char *step_s)
{
    enum cli_type t = k->opt->type;
    uint64_t from, to, step;
    if (whole_number(t, from_s, &from) || whole_number(t, to_s, &to))
        return sweep_err(item, "FROM and TO must be whole numbers for '%s' (see --help)",
                         k->opt->name);
    if (whole_number(t, step_s, &step) || (t == CLI_INT && (int64_t)step < 0))
        return sweep_err(item, "the step of '%s' must be a whole number, such as +2, or a "
                         "factor such as x2", k->opt->name);
    if (step == 0)
        return sweep_err(item, "the step must be above 0 (ranges go upwards)%s", "");
    bool up = t == CLI_INT ? (int64_t)to >= (int64_t)from : to >= from;
    if (!up)
        return sweep_err(item, "FROM must not be above TO (ranges go upwards)%s", "");
    uint64_t span = to - from; /* exact in two's complement as well */
    if (span / step >= CLI_SWEEP_MAX_POINTS)
        return too_many(item, (double)(span / step) + 1);
    size_t count = (size_t)(span / step) + 1;
    k->vals = calloc(count, sizeof *k->vals);
    if (!k->vals)
        return sweep_err(item, "out of memory%s", "");
    for (size_t i = 0; i < count; i++) {
        char val[32];
        whole_text(t, from + step * i, val, sizeof val);
        if (add_value(k, val, count))
            return sweep_err(item, "out of memory%s", "");
    }
    return 0;
}

/* whole numbers are exact in a double up to 2^53 */
#define EXACT_DOUBLE 9007199254740992.0

/* FROM:TO:STEP in `buf`, which is cut into its parts */
static int range_values(struct cli_sweep_key *k, const char *item, char *buf)
{
    enum cli_type t = k->opt->type;
    char *c1 = strchr(buf, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2 || strchr(c2 + 1, ':'))
        return sweep_err(item, syntax, "; a range has three parts, FROM:TO:STEP");
    *c1 = *c2 = '\0';
    char *st = c2 + 1;
    bool mult = *st == 'x' || *st == 'X' || *st == '*';
    if (whole(t) && !mult)
        return whole_added_range(k, item, buf, c1 + 1, st + (*st == '+'));
    double from, to, step;
    if (range_number(t, buf, &from) || range_number(t, c1 + 1, &to))
        return sweep_err(item, whole(t) ? "FROM and TO must be whole numbers for '%s' "
                         "(see --help)" : "FROM and TO must be numbers for '%s' (see --help)",
                         k->opt->name);
    if (mult) {
        st++;
        char *caret = strchr(st, '^');
        double base, ex = 1;
        if (caret)
            *caret = '\0';
        if (cli_parse_double(st, &base) || (caret && cli_parse_double(caret + 1, &ex)))
            return sweep_err(item, syntax, "; the factor is a number such as x2 or x10^0.25");
        step = pow(base, ex);
        if (!(step > 1.0) || !isfinite(step))
            return sweep_err(item, "the factor must be above 1%s", "");
        if (!(from > 0))
            return sweep_err(item, "a multiplied range must start above 0%s", "");
        if (whole(t) && !(to < EXACT_DOUBLE))
            return sweep_err(item, "a multiplied range of '%s' must stay below 2^53; list "
                             "the values (KEY=V1,V2,...) or add a step (+D)", k->opt->name);
    } else {
        if (*st == '+')
            st++;
        if (range_number(t, st, &step))
            return sweep_err(item, "the step of '%s' must be a number such as +0.1 or a factor "
                             "such as x10^0.25", k->opt->name);
        if (!(step > 0))
            return sweep_err(item, "the step must be above 0 (ranges go upwards)%s", "");
    }
    if (!(to >= from))
        return sweep_err(item, "FROM must not be above TO (ranges go upwards)%s", "");
    double count = mult ? floor(log(to / from) / log(step) + 1e-9) + 1
                        : floor((to - from) / step + 1e-9) + 1;
    if (!(count <= CLI_SWEEP_MAX_POINTS))
        return too_many(item, count);
    k->vals = calloc((size_t)count, sizeof *k->vals);
    if (!k->vals)
        return sweep_err(item, "out of memory%s", "");
    double prev = NAN;
    for (size_t i = 0; i < (size_t)count; i++) {
        double x = mult ? from * pow(step, (double)i) : from + step * (double)i;
        char val[64];
        if (whole(t)) {
            x = floor(x + 0.5);
            if (x == prev)
                return sweep_err(item, "rounded to whole numbers the range repeats a value%s;"
                                 " use a larger factor", "");
            whole_text(t, (uint64_t)x, val, sizeof val);
        } else {
            snprintf(val, sizeof val, mult ? "%.6g" : "%.10g", x);
            if (i > 0 && !strcmp(val, k->vals[i - 1]))
                return sweep_err(item, "written with the digits a sweep keeps, the range "
                                 "repeats the value %s; use a larger step", val);
        }
        prev = x;
        if (add_value(k, val, (size_t)count))
            return sweep_err(item, "out of memory%s", "");
    }
    return 0;
}

/* A range, whatever its length: its parts are cut from a copy of it (a copy
 * into a fixed buffer cut short would be read as other numbers). */
static int parse_range(struct cli_sweep_key *k, const char *item, const char *v)
{
    char *buf = strdup(v);
    if (!buf)
        return sweep_err(item, "out of memory%s", "");
    int rc = range_values(k, item, buf);
    free(buf);
    return rc;
}

static int parse_list(struct cli_sweep_key *k, const char *item, const char *v)
{
    size_t cap = 1;
    for (const char *p = v; *p; p++)
        cap += *p == ',';
    if (cap > CLI_SWEEP_MAX_POINTS)
        return sweep_err(item, "more than %s values", "10000");
    k->vals = calloc(cap, sizeof *k->vals);
    if (!k->vals)
        return sweep_err(item, "out of memory%s", "");
    const char *p = v;
    for (;;) {
        size_t n = strcspn(p, ",");
        char val[128];
        if (n == 0 || n >= sizeof val)
            return sweep_err(item, "an empty or overlong value in the list; write "
                             "KEY=V1,V2,...%s", "");
        memcpy(val, p, n);
        val[n] = '\0';
        if (add_value(k, val, cap))
            return sweep_err(item, "out of memory%s", "");
        if (!p[n])
            break;
        p += n + 1;
    }
    return 0;
}

void cli_sweep_free(struct cli_sweep *sw)
{
    for (unsigned i = 0; i < sw->nkeys; i++) {
        for (unsigned j = 0; j < sw->key[i].n; j++)
            free(sw->key[i].vals[j]);
        free(sw->key[i].vals);
    }
    memset(sw, 0, sizeof *sw);
}

int cli_sweep_parse(struct cli_sweep *sw, const char *spec, const struct cli_opt *opts,
                    const char *const *fixed, const char *why)
{
    memset(sw, 0, sizeof *sw);
    snprintf(origin, sizeof origin, "%s", cli_where(opts, "sweep"));
    size_t L = strlen(spec);
    char *buf = malloc(L + 1);
    if (!buf)
        return 2;
    memcpy(buf, spec, L + 1);
    char *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(buf, " \t;", &save); tok && !rc;
         tok = strtok_r(NULL, " \t;", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1]) {
            rc = sweep_err(tok, syntax, ", such as ber=1e-12:1e-5:x10^0.25 or load=0.2,0.5");
            break;
        }
        *eq = '\0';
        const struct cli_opt *o = cli_find(opts, tok);
        *eq = '=';
        if (!o) {
            *eq = '\0';
            fprintf(stderr, "error: %s: '%s' is not a setting of this command "
                    "(see --help for the list)\n", origin, tok);
            rc = 2;
            break;
        }
        for (const char *const *f = fixed; f && *f && !rc; f++)
            if (!strcmp(o->name, *f)) {
                fprintf(stderr, "error: %s: '%s' cannot be swept%s\n", origin, o->name,
                        why ? why : "");
                rc = 2;
            }
        /* (a config file's value gives way to the command line's sweep) */
        if (!rc && cli_is_set(opts, o->name) &&
            !strncmp(cli_where(opts, o->name), "option --", 9)) {
            fprintf(stderr, "error: %s: '%s' is swept and also set (%s); give it in one "
                    "place\n", origin, o->name, cli_where(opts, o->name));
            rc = 2;
        }
        for (unsigned i = 0; i < sw->nkeys && !rc; i++)
            if (sw->key[i].opt == o) {
                fprintf(stderr, "error: %s: '%s' appears twice; give all its "
                        "values in one KEY=... item\n", origin, o->name);
                rc = 2;
            }
        if (rc)
            break;
        if (sw->nkeys == CLI_SWEEP_MAX_KEYS) {
            fprintf(stderr, "error: %s: at most %d keys\n", origin, CLI_SWEEP_MAX_KEYS);
            rc = 2;
            break;
        }
        struct cli_sweep_key *k = &sw->key[sw->nkeys++];
        k->opt = o;
        const char *v = eq + 1;
        if (strchr(v, ':')) {
            if (o->type == CLI_STRING || o->type == CLI_FLAG || o->type == CLI_BOOL) {
                rc = sweep_err(tok, "'%s' is not numeric: list its values, KEY=V1,V2,...",
                               o->name);
                break;
            }
            rc = parse_range(k, tok, v);
        } else
            rc = parse_list(k, tok, v);
        /* every value against the option's type and range */
        for (unsigned j = 0; j < k->n && !rc; j++) {
            char where[512];
            snprintf(where, sizeof where, "%s (%s=%s)", origin, o->name, k->vals[j]);
            rc = cli_check(opts, o->name, k->vals[j], where);
            /* a number that JSON would not take as written is kept as
             * applied, so that labels, CSV and JSON carry numbers (1k as
             * 1000, .5 as 0.5) */
            char plain[128];
            if (!rc && !cli_json_number(k->vals[j]) &&
                cli_canonical(o, k->vals[j], plain, sizeof plain) == 0 &&
                strcmp(plain, k->vals[j])) {
                char *n = strdup(plain);
                if (!n) {
                    rc = sweep_err(tok, "out of memory%s", "");
                    break;
                }
                free(k->vals[j]);
                k->vals[j] = n;
            }
        }
    }
    free(buf);
    if (!rc && sw->nkeys == 0) {
        fprintf(stderr, "error: %s: nothing to sweep; %s\n", origin,
                "write KEY=V1,V2,... or KEY=FROM:TO:STEP, e.g. load=0.2,0.5");
        rc = 2;
    }
    if (!rc) {
        double total = 1;
        for (unsigned i = 0; i < sw->nkeys; i++)
            total *= sw->key[i].n;
        if (total > CLI_SWEEP_MAX_POINTS) {
            fprintf(stderr, "error: %s: %.0f points in all, at most %d; sweep "
                    "fewer values\n", origin, total, CLI_SWEEP_MAX_POINTS);
            rc = 2;
        } else
            sw->npoints = (size_t)total;
    }
    if (rc)
        cli_sweep_free(sw);
    return rc;
}

static unsigned value_index(const struct cli_sweep *sw, size_t i, unsigned k)
{
    for (unsigned j = sw->nkeys; j-- > k + 1;)
        i /= sw->key[j].n;
    return (unsigned)(i % sw->key[k].n);
}

const char *cli_sweep_value(const struct cli_sweep *sw, size_t i, unsigned k)
{
    return sw->key[k].vals[value_index(sw, i, k)];
}

int cli_sweep_apply(const struct cli_sweep *sw, size_t i, const struct cli_opt *opts)
{
    for (unsigned k = 0; k < sw->nkeys; k++) {
        const char *v = cli_sweep_value(sw, i, k);
        char where[512];
        snprintf(where, sizeof where, "%s (point %zu: %s=%s)", origin, i + 1,
                 sw->key[k].opt->name, v);
        if (cli_set(opts, sw->key[k].opt->name, v, where))
            return 2;
    }
    return 0;
}

bool cli_sweep_has(const struct cli_sweep *sw, const char *name)
{
    for (unsigned k = 0; k < sw->nkeys; k++)
        if (!strcmp(sw->key[k].opt->name, name))
            return true;
    return false;
}

double cli_opt_number(const struct cli_opt *o)
{
    switch (o->type) {
    case CLI_UINT:
    case CLI_BYTES: return (double)*(const uint64_t *)o->ptr;
    case CLI_INT: return (double)*(const int64_t *)o->ptr;
    case CLI_DOUBLE: return *(const double *)o->ptr;
    default: return NAN;
    }
}
