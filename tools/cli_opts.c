/* Option tables, config files, number parsing and output helpers for the
 * rifl CLI. */
#include "cli.h"
#include "rifl/counter.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rifl/frame.h"
#include "rifl/text.h"

int cli_frame_width(const struct cli_opt *opts, const char *name, uint64_t bits)
{
    if (bits <= 4096 && rifl_frame_width_check((unsigned)bits) == RIFL_OK)
        return 0;
    return cli_fail(opts, name, "%llu bits is not a RIFL frame width; use 64, 128, 256, 512, "
                    "1024 or 2048", (unsigned long long)bits);
}

void cli_format_duration(char *buf, size_t n, double s)
{
    if (!isfinite(s))
        snprintf(buf, n, "forever");
    else if (s < 90)
        snprintf(buf, n, "%.2g s", s);
    else if (s < 5400)
        snprintf(buf, n, "%.2g min", s / 60);
    else if (s < 2 * 86400)
        snprintf(buf, n, "%.2g h", s / 3600);
    else if (s < 2 * 365 * 86400.0)
        snprintf(buf, n, "%.2g days", s / 86400);
    else
        snprintf(buf, n, "%.2g years", s / (365.25 * 86400));
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cli_parse_double(const char *s, double *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_scaled(const char *s, uint64_t *out, int bytes)
{
    char *end;
    /* no minus and no white space of any kind in front (strtod would skip a
     * newline or a form feed and read the digits after it through a double) */
    if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
        return -1;
    /* plain digits: exact, whatever the size (strtod would round above 2^53) */
    size_t nd = strspn(s, "0123456789");
    if (nd && !s[nd]) {
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || *end)
            return -1;
        *out = v;
        return 0;
    }
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0)
        return -1;
    double mult = 1;
    const char *u = end;
    if (*u) {
        char c = *u++;
        int bin = 0;
        if (*u == 'i') {
            bin = 1;
            u++;
        }
        double base = bin ? 1024.0 : 1000.0;
        switch (c) {
        case 'k': case 'K': mult = base; break;
        case 'M': case 'm': mult = base * base; break;
        case 'G': case 'g': mult = base * base * base; break;
        case 'T': case 't': mult = base * base * base * base; break;
        default:
            if (bytes && (c == 'B' || c == 'b') && !bin) {
                u--;
                break;
            }
            return -1;
        }
        if (bytes && (*u == 'B' || *u == 'b'))
            u++;
        if (*u)
            return -1;
    }
    v *= mult;
    if (v >= 1.8446744073709552e19 || v != floor(v))
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_u64(const char *s, uint64_t *out) { return parse_scaled(s, out, 0); }

int cli_parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}
int cli_parse_bytes(const char *s, uint64_t *out) { return parse_scaled(s, out, 1); }

static int parse_bool(const char *s, bool *out)
{
    if (!strcasecmp(s, "1") || !strcasecmp(s, "true") || !strcasecmp(s, "yes") ||
        !strcasecmp(s, "on")) {
        *out = true;
        return 0;
    }
    if (!strcasecmp(s, "0") || !strcasecmp(s, "false") || !strcasecmp(s, "no") ||
        !strcasecmp(s, "off")) {
        *out = false;
        return 0;
    }
    return -1;
}

/* String option values live for the whole run; they are kept in one list
 * (so an overridden value is not lost) and freed at exit. */
static char **kept;
static size_t nkept, capkept;

static void free_kept(void)
{
    for (size_t i = 0; i < nkept; i++)
        free(kept[i]);
    free(kept);
    kept = NULL;
    nkept = capkept = 0;
}

static char *keep_string(const char *value)
{
    if (nkept == capkept) {
        size_t cap = capkept ? 2 * capkept : 16;
        char **nk = realloc(kept, cap * sizeof *nk);
        if (!nk)
            return NULL;
        if (!kept)
            atexit(free_kept);
        kept = nk;
        capkept = cap;
    }
    char *copy = strdup(value);
    if (copy)
        kept[nkept++] = copy;
    return copy;
}

const struct cli_opt *cli_find(const struct cli_opt *opts, const char *name)
{
    for (const struct cli_opt *o = opts; o && o->name; o++) {
        if (!strcmp(o->name, name))
            return o;
        /* config files may use '_' where the option uses '-' */
        size_t n = strlen(o->name);
        if (strlen(name) == n) {
            size_t i = 0;
            for (; i < n; i++) {
                char a = o->name[i], b = name[i];
                if (a == '-') a = '_';
                if (b == '-') b = '_';
                if (a != b)
                    break;
            }
            if (i == n)
                return o;
        }
    }
    return NULL;
}

static const char *type_hint(enum cli_type t)
{
    switch (t) {
    case CLI_FLAG: return "true or false (or no value)";
    case CLI_BOOL: return "true or false";
    case CLI_UINT: return "a non-negative integer (suffixes k, M, G or Ki, Mi, Gi allowed)";
    case CLI_INT: return "an integer";
    case CLI_DOUBLE: return "a number";
    case CLI_BYTES: return "a byte count such as 4096, 64KiB or 10GB";
    default: return "a value";
    }
}

/* ---- where each option got its value ------------------------------------ */

union cli_value {
    bool b;
    uint64_t u;
    int64_t i;
    double d;
    const char *s;
};

struct origin {
    const void *ptr;
    bool set;
    char where[256];
    union cli_value dflt;
};

#define MAX_ORIGINS 128
static struct origin origins[MAX_ORIGINS];
static unsigned norigins;

static union cli_value get_value(const struct cli_opt *o)
{
    union cli_value v;
    memset(&v, 0, sizeof v);
    switch (o->type) {
    case CLI_FLAG: case CLI_BOOL: v.b = *(bool *)o->ptr; break;
    case CLI_UINT: case CLI_BYTES: v.u = *(uint64_t *)o->ptr; break;
    case CLI_INT: v.i = *(int64_t *)o->ptr; break;
    case CLI_DOUBLE: v.d = *(double *)o->ptr; break;
    case CLI_STRING: v.s = *(const char **)o->ptr; break;
    }
    return v;
}

static void put_value(const struct cli_opt *o, union cli_value v)
{
    switch (o->type) {
    case CLI_FLAG: case CLI_BOOL: *(bool *)o->ptr = v.b; break;
    case CLI_UINT: case CLI_BYTES: *(uint64_t *)o->ptr = v.u; break;
    case CLI_INT: *(int64_t *)o->ptr = v.i; break;
    case CLI_DOUBLE: *(double *)o->ptr = v.d; break;
    case CLI_STRING: *(const char **)o->ptr = v.s; break;
    }
}

static struct origin *origin_of(const struct cli_opt *o)
{
    if (!o || !o->ptr)
        return NULL;
    for (unsigned i = 0; i < norigins; i++)
        if (origins[i].ptr == o->ptr)
            return &origins[i];
    if (norigins == MAX_ORIGINS)
        return NULL;
    struct origin *r = &origins[norigins++];
    memset(r, 0, sizeof *r);
    r->ptr = o->ptr;
    r->dflt = get_value(o);
    return r;
}

/* forget earlier settings and remember the defaults */
static void origins_reset(const struct cli_opt *opts)
{
    norigins = 0;
    for (const struct cli_opt *o = opts; o && o->name; o++)
        origin_of(o);
}

const char *cli_where(const struct cli_opt *opts, const char *name)
{
    static char ring[8][300];
    static unsigned next;
    char *buf = ring[next++ % 8];
    const struct cli_opt *o = cli_find(opts, name);
    const struct origin *r = o ? origin_of(o) : NULL;
    if (r && r->set)
        snprintf(buf, sizeof ring[0], "%s", r->where);
    else
        snprintf(buf, sizeof ring[0], "option --%s", o ? o->name : name);
    return buf;
}

bool cli_is_set(const struct cli_opt *opts, const char *name)
{
    const struct origin *r = origin_of(cli_find(opts, name));
    return r && r->set;
}

/* the wheres of a comma-separated list of names, joined by " and " */
static void where_list(const struct cli_opt *opts, const char *names, char *out, size_t len)
{
    out[0] = '\0';
    char buf[256];
    snprintf(buf, sizeof buf, "%s", names);
    char *save = NULL;
    for (char *n = strtok_r(buf, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
        size_t L = strlen(out);
        snprintf(out + L, len - L, "%s%s", L ? " and " : "", cli_where(opts, n));
    }
}

int cli_fail(const struct cli_opt *opts, const char *names, const char *fmt, ...)
{
    char where[1024];
    where_list(opts, names, where, sizeof where);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "error: %s: ", where);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

int cli_unused(const struct cli_opt *opts, const char *name, const char *reason)
{
    if (!cli_is_set(opts, name))
        return 0;
    const struct cli_opt *o = cli_find(opts, name);
    fprintf(stderr, "error: %s: --%s has no effect %s; drop it\n", cli_where(opts, name),
            o ? o->name : name, reason);
    return 2;
}

int cli_blame(const struct cli_opt *opts, int (*check)(void *ctx), void *ctx,
              const char *msg)
{
    char names[1024] = "";
    for (const struct cli_opt *o = opts; o && o->name; o++) {
        struct origin *r = origin_of(o);
        if (!r || !r->set)
            continue;
        union cli_value cur = get_value(o);
        put_value(o, r->dflt);
        int ok = check(ctx) == 0;
        put_value(o, cur);
        if (ok) {
            size_t L = strlen(names);
            snprintf(names + L, sizeof names - L, "%s%s", L ? " and " : "", r->where);
        }
    }
    if (names[0])
        fprintf(stderr, "error: %s: %s\n", names, msg);
    else
        fprintf(stderr, "error: %s\n", msg);
    return 2;
}

int cli_check_output(const char *path, const char *what)
{
    if (!path || !*path) {
        fprintf(stderr, "error: %s: give a file name to write\n", what);
        return 2;
    }
    size_t n = strlen(path);
    struct stat st;
    bool existed = stat(path, &st) == 0;
    if (path[n - 1] == '/' || (existed && S_ISDIR(st.st_mode))) {
        fprintf(stderr, "error: %s: '%s' is a directory; give the name of a file to write "
                "(e.g. '%s%sout')\n", what, path, path, path[n - 1] == '/' ? "" : "/");
        return 2;
    }
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "error: %s: cannot write '%s': %s; give a path in a writable "
                "directory\n", what, path, strerror(errno));
        return 2;
    }
    fclose(f);
    if (!existed)
        remove(path);
    return 0;
}

/* ---- setting values ------------------------------------------------------ */

static void fmt_bound(char *buf, size_t n, double v, enum cli_type type)
{
    bool whole = type == CLI_UINT || type == CLI_BYTES || type == CLI_INT;
    if (whole && v >= 18446744073709551615.0)
        snprintf(buf, n, "2^64 - 1"); /* (the double is 2^64) */
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%g", v);
}

/* parse and range-check `value` for option o; prints the error */
static int convert(const struct cli_opt *o, const char *value, const char *where,
                   union cli_value *out)
{
    double num = 0;
    int bad = 0;
    memset(out, 0, sizeof *out);
    switch (o->type) {
    case CLI_FLAG:
    case CLI_BOOL:
        if (!value || (o->type == CLI_FLAG && !*value))
            out->b = true; /* --json, or `json =` in a config file */
        else if (parse_bool(value, &out->b))
            bad = 1;
        break;
    case CLI_UINT:
    case CLI_BYTES:
        if (!value || (o->type == CLI_UINT ? cli_parse_u64(value, &out->u)
                                           : cli_parse_bytes(value, &out->u)))
            bad = 1;
        else
            num = (double)out->u;
        break;
    case CLI_INT:
        if (cli_parse_i64(value, &out->i))
            bad = 1;
        else
            num = (double)out->i;
        break;
    case CLI_DOUBLE:
        if (!value || cli_parse_double(value, &out->d))
            bad = 1;
        else
            num = out->d;
        break;
    case CLI_STRING:
        if (!value)
            bad = 1;
        else
            out->s = value;
        break;
    }
    double big;
    bool beyond = false; /* a whole number past what 64 bits hold */
    if (bad && value && (o->type == CLI_UINT || o->type == CLI_BYTES || o->type == CLI_INT) &&
        !cli_parse_double(value, &big) && big == floor(big) && o->min < o->max &&
        (big > o->max || big < o->min || big >= 0x1p64 || big < -0x1p63)) {
        num = big; /* a whole number, only too large (or too small) */
        beyond = big >= 0x1p64 || big < -0x1p63;
        bad = 0;
    }
    if (bad) {
        fprintf(stderr, "error: %s: '%s' needs %s, got '%s'\n", where, o->name,
                type_hint(o->type), value ? value : "(nothing)");
        return 2;
    }
    if (o->min < o->max && o->type != CLI_STRING && o->type != CLI_FLAG &&
        o->type != CLI_BOOL && (num < o->min || num > o->max || beyond)) {
        char lo[32], hi[32];
        fmt_bound(lo, sizeof lo, o->min, o->type);
        fmt_bound(hi, sizeof hi, o->max, o->type);
        fprintf(stderr, "error: %s: '%s' = %s is out of range; use a value from %s to %s\n",
                where, o->name, value, lo, hi);
        return 2;
    }
    return 0;
}

static int unknown_setting(const char *where, const char *name)
{
    fprintf(stderr, "error: %s: unknown setting '%s' (see --help for the list)\n", where, name);
    return 2;
}

int cli_check(const struct cli_opt *opts, const char *name, const char *value,
              const char *where)
{
    const struct cli_opt *o = cli_find(opts, name);
    if (!o)
        return unknown_setting(where, name);
    union cli_value v;
    return convert(o, value, where, &v);
}

bool cli_json_number(const char *s)
{
    if (*s == '-')
        s++;
    if (!(*s >= '0' && *s <= '9'))
        return false;
    if (*s == '0' && s[1] >= '0' && s[1] <= '9')
        return false;
    s += strspn(s, "0123456789");
    if (*s == '.') {
        s++;
        size_t n = strspn(s, "0123456789");
        if (!n)
            return false;
        s += n;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        size_t n = strspn(s, "0123456789");
        if (!n)
            return false;
        s += n;
    }
    return *s == '\0';
}
int cli_canonical(const struct cli_opt *o
, const char *value, char *buf, size_t len)
{
    union cli_value v;
    if (!o || convert(o, value, "", &v))
        return 2;
    switch (o->type) {
    case CLI_UINT:
    case CLI_BYTES: snprintf(buf, len, "%llu", (unsigned long long)v.u); break;
    case CLI_INT: snprintf(buf, len, "%lld", (long long)v.i); break;
    case CLI_DOUBLE: snprintf(buf, len, "%.15g", v.d); break;
    default: snprintf(buf, len, "%s", value); break;
    }
    return 0;
}

int cli_set(const struct cli_opt *opts, const char *name, const char *value,
            const char *where)
{
    const struct cli_opt *o = cli_find(opts, name);
    if (!o)
        return unknown_setting(where, name);
    union cli_value v;
    if (convert(o, value, where, &v))
        return 2;
    if (o->type == CLI_STRING) {
        v.s = keep_string(value);
        if (!v.s) {
            fprintf(stderr, "error: out of memory\n");
            return 2;
        }
    }
    put_value(o, v);
    struct origin *r = origin_of(o);
    if (r) {
        r->set = true;
        if (!strncmp(where, "option --", 9))
            snprintf(r->where, sizeof r->where, "%s", where);
        else
            snprintf(r->where, sizeof r->where, "%s: %s", where, o->name);
    }
    return 0;
}

/* a message about a list, unless `what` is NULL (a quiet check) */
static void list_err(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void list_err(const char *what, const char *fmt, ...)
{
    if (!what)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "error: %s: ", what);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

int cli_parse_list(const char *s, double *out, unsigned max, double lo, double hi,
                   const char *what)
{
    unsigned k = 0;
    const char *p = s;
    char l[32], h[32];
    fmt_bound(l, sizeof l, lo, CLI_DOUBLE);
    fmt_bound(h, sizeof h, hi, CLI_DOUBLE);
    if (!s || !*s) {
        list_err(what, "give at least one number, e.g. 1,2\n");
        return -1;
    }
    for (;;) {
        size_t n = strcspn(p, ",");
        char item[64];
        double v;
        if (n == 0 || n >= sizeof item) {
            list_err(what, "'%s' has an empty or overlong element; write numbers "
                     "separated by single commas\n", s);
            return -1;
        }
        memcpy(item, p, n);
        item[n] = '\0';
        if (cli_parse_double(item, &v)) {
            list_err(what, "'%s' in '%s' is not a number\n", item, s);
            return -1;
        }
        if (v < lo || v > hi) {
            list_err(what, "%s in '%s' is out of range; use values from %s to %s\n", item, s,
                     l, h);
            return -1;
        }
        if (k >= max) {
            list_err(what, "'%s' has more than %u values\n", s, max);
            return -1;
        }
        out[k++] = v;
        if (!p[n])
            break;
        p += n + 1;
    }
    return (int)k;
}

char *cli_read_named(const char *path, const char *what, size_t *len)
{
    char pre[320] = "";
    if (what)
        snprintf(pre, sizeof pre, "%s: ", what);
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "error: %scannot open '%s': %s\n", pre, path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) {
            if (ferror(f)) {
                fprintf(stderr, "error: %sreading '%s': %s\n", pre, path, strerror(errno));
                free(buf);
                buf = NULL;
                if (f != stdin)
                    fclose(f);
                return NULL;
            }
            break;
        }
        if (cap >= CLI_READ_MAX) {
            fprintf(stderr, "error: %s'%s' is larger than %d MiB, more than any settings, "
                    "table or dump this command reads; check the file name\n", pre, path,
                    CLI_READ_MAX >> 20);
            free(buf);
            if (f != stdin)
                fclose(f);
            return NULL;
        }
        cap *= 2;
        char *nb = realloc(buf, cap + 1);
        if (!nb) {
            free(buf);
            buf = NULL;
        } else
            buf = nb;
    }
    if (f != stdin)
        fclose(f);
    if (!buf) {
        fprintf(stderr, "error: %scannot read '%s': out of memory\n", pre, path);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

char *cli_read_file(const char *path, size_t *len)
{
    return cli_read_named(path, NULL, len);
}

char *cli_next_line(char **p)
{
    char *line = *p;
    if (!*line)
        return NULL;
    size_t n = strcspn(line, "\n");
    *p = line + n + (line[n] == '\n');
    line[n] = '\0';
    if (n && line[n - 1] == '\r')
        line[n - 1] = '\0';
    return line;
}

struct kv_ctx {
    const struct cli_opt *opts;
    const char *path;
};

static int kv_cb(void *vctx, const char *key, const char *value, unsigned line,
                 char *err, size_t errlen)
{
    struct kv_ctx *c = vctx;
    char where[512];
    snprintf(where, sizeof where, "%s:%u", c->path, line);
    if (!strcmp(key, "config")) {
        fprintf(stderr, "error: %s: config files cannot include other config files\n", where);
        return RIFL_ERR_CONFIG;
    }
    return cli_set(c->opts, key, value, where) ? RIFL_ERR_CONFIG : RIFL_OK;
}

static int load_config(const struct cli_opt *opts, const char *path)
{
    struct stat st;
    const char *why = NULL;
    if (strcmp(path, "-")) {
        if (stat(path, &st))
            why = strerror(errno);
        else if (S_ISDIR(st.st_mode))
            why = "it is a directory";
        else if (access(path, R_OK))
            why = strerror(errno);
    }
    if (why) {
        fprintf(stderr, "error: option --config: cannot read '%s': %s; give a settings file "
                "(`key = value` per line)\n", path, why);
        return 2;
    }
    size_t len;
    char *buf = cli_read_named(path, "option --config", &len);
    if (!buf)
        return 2;
    struct kv_ctx ctx = { opts, path };
    char err[256] = "";
    int rc = rifl_kv_parse(buf, len, kv_cb, &ctx, err, sizeof err);
    free(buf);
    if (rc != RIFL_OK) {
        if (err[0])
            fprintf(stderr, "error: %s: %s\n", path, err);
        return 2;
    }
    return 0;
}

void cli_usage(FILE *f, const char *cmd, const struct cli_opt *opts,
               const char *usage_line, const char *description)
{
    fprintf(f, "usage: rifl %s %s\n\n", cmd, usage_line ? usage_line : "[options]");
    if (description)
        fprintf(f, "%s\n\n", description);
    fprintf(f, "options:\n");
    for (const struct cli_opt *o = opts; o && o->name; o++) {
        char left[64];
        const char *arg = o->type == CLI_FLAG ? "" : o->type == CLI_STRING ? " S"
                        : o->type == CLI_DOUBLE ? " X" : o->type == CLI_BOOL ? " B" : " N";
        snprintf(left, sizeof left, "--%s%s", o->name, arg);
        fprintf(f, "  %-24s %s", left, o->help ? o->help : "");
        char dflt[96] = "";
        if (o->type != CLI_FLAG && o->ptr) {
            switch (o->type) {
            case CLI_BOOL: snprintf(dflt, sizeof dflt, "default %s",
                                    *(bool *)o->ptr ? "true" : "false"); break;
            case CLI_UINT: case CLI_BYTES:
                snprintf(dflt, sizeof dflt, "default %llu",
                         (unsigned long long)*(uint64_t *)o->ptr); break;
            case CLI_INT: snprintf(dflt, sizeof dflt, "default %lld",
                                   (long long)*(int64_t *)o->ptr); break;
            case CLI_DOUBLE: snprintf(dflt, sizeof dflt, "default %g", *(double *)o->ptr); break;
            case CLI_STRING:
                if (*(const char **)o->ptr)
                    snprintf(dflt, sizeof dflt, "default %.80s", *(const char **)o->ptr);
                break;
            default: break;
            }
        }
        if (o->min < o->max && o->type != CLI_STRING && o->type != CLI_FLAG &&
            o->type != CLI_BOOL) {
            char lo[32], hi[32];
            fmt_bound(lo, sizeof lo, o->min, o->type);
            fmt_bound(hi, sizeof hi, o->max, o->type);
            size_t L = strlen(dflt);
            snprintf(dflt + L, sizeof dflt - L, "%s%s to %s", L ? ", " : "", lo, hi);
        }
        if (dflt[0])
            fprintf(f, " (%s)", dflt);
        fputc('\n', f);
    }
    fprintf(f, "  %-24s %s\n", "--config FILE",
            "read settings from FILE (`key = value` per line, keys as above);"
            " the command line wins");
    fprintf(f, "  %-24s %s\n", "--help", "show this help");
}

int cli_parse(int argc, char **argv, const struct cli_opt *opts,
              const char *usage_line, const char *description,
              char **pos, int npos, int *npos_out)
{
    int np = 0;
    origins_reset(opts);
    /* config first, wherever it appears */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            cli_usage(stdout, argv[0], opts, usage_line, description);
            return 1;
        }
        const char *cfg = NULL;
        if (!strcmp(argv[i], "--config")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "error: --config needs a file name\n");
                return 2;
            }
            cfg = argv[++i];
        } else if (!strncmp(argv[i], "--config=", 9))
            cfg = argv[i] + 9;
        if (cfg && load_config(opts, cfg))
            return 2;
    }
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (!strcmp(a, "--config")) {
            i++;
            continue;
        }
        if (!strncmp(a, "--config=", 9))
            continue;
        if (a[0] == '-' && a[1] == '-' && a[2]) {
            char name[128];
            const char *val = NULL;
            const char *eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            if (n >= sizeof name) n = sizeof name - 1;
            memcpy(name, a + 2, n);
            name[n] = '\0';
            const struct cli_opt *o = cli_find(opts, name);
            if (!o) {
                fprintf(stderr, "error: unknown option '--%s' for 'rifl %s' (see --help)\n",
                        name, argv[0]);
                return 2;
            }
            if (eq)
                val = eq + 1;
            else if (o->type != CLI_FLAG) {
                if (i + 1 >= argc) {
                    fprintf(stderr, "error: option '--%s' needs a value\n", name);
                    return 2;
                }
                val = argv[++i];
            }
            char where[160];
            snprintf(where, sizeof where, "option --%s", name);
            if (cli_set(opts, name, val, where))
                return 2;
        } else {
            if (np >= npos) {
                fprintf(stderr, "error: unexpected argument '%s' for 'rifl %s' (see --help)\n",
                        a, argv[0]);
                return 2;
            }
            pos[np++] = a;
        }
    }
    if (npos_out)
        *npos_out = np;
    return 0;
}

void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void json_counters(FILE *f, const rifl_counter *ct, size_t n, const void *stats)
{
    fputc('{', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\"%s\": %llu", i ? ", " : "", ct[i].name,
                (unsigned long long)rifl_counter_value(&ct[i], stats));
    fputc('}', f);
}

static double last_progress;
static bool progress_shown;

void cli_progress(const char *what, double fraction, const char *extra, bool force)
{
    if (!force && !isatty(2))
        return;
    double now = cli_now();
    if (progress_shown && now - last_progress < 0.5)
        return;
    last_progress = now;
    progress_shown = true;
    fprintf(stderr, "\r%s: %5.1f%%%s%s   ", what, 100.0 * fraction, extra ? "  " : "",
            extra ? extra : "");
    fflush(stderr);
}

void cli_progress_done(bool force)
{
    if (progress_shown && (force || isatty(2)))
        fputc('\n', stderr);
    progress_shown = false;
}
