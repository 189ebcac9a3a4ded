/* Option tables, config files, number parsing and output helpers for the
 * rifl CLI. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "rifl/text.h"

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
    if (!s || !*s || *s == '-')
        return -1;
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

static const struct cli_opt *find_opt(const struct cli_opt *opts, const char *name)
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
    case CLI_BOOL: return "true or false";
    case CLI_UINT: return "a non-negative integer (suffixes k, M, G or Ki, Mi, Gi allowed)";
    case CLI_INT: return "an integer";
    case CLI_DOUBLE: return "a number";
    case CLI_BYTES: return "a byte count such as 4096, 64KiB or 10GB";
    default: return "a value";
    }
}

int cli_set(const struct cli_opt *opts, const char *name, const char *value,
            const char *where)
{
    const struct cli_opt *o = find_opt(opts, name);
    if (!o) {
        fprintf(stderr, "error: %s: unknown setting '%s' (see --help for the list)\n",
                where, name);
        return 2;
    }
    double num = 0;
    int bad = 0;
    switch (o->type) {
    case CLI_FLAG:
    case CLI_BOOL: {
        bool b;
        if (!value)
            b = true;
        else if (parse_bool(value, &b))
            bad = 1;
        if (!bad)
            *(bool *)o->ptr = b;
        break;
    }
    case CLI_UINT:
    case CLI_BYTES: {
        uint64_t v;
        if (!value || (o->type == CLI_UINT ? cli_parse_u64(value, &v) : cli_parse_bytes(value, &v)))
            bad = 1;
        else {
            *(uint64_t *)o->ptr = v;
            num = (double)v;
        }
        break;
    }
    case CLI_INT: {
        char *end;
        errno = 0;
        long long v = value ? strtoll(value, &end, 0) : 0;
        if (!value || errno || end == value || *end)
            bad = 1;
        else {
            *(int64_t *)o->ptr = v;
            num = (double)v;
        }
        break;
    }
    case CLI_DOUBLE: {
        double v;
        if (!value || cli_parse_double(value, &v))
            bad = 1;
        else {
            *(double *)o->ptr = v;
            num = v;
        }
        break;
    }
    case CLI_STRING:
        if (!value)
            bad = 1;
        else {
            char *copy = keep_string(value);
            if (!copy) {
                fprintf(stderr, "error: out of memory\n");
                return 2;
            }
            *(const char **)o->ptr = copy;
        }
        break;
    }
    if (bad) {
        fprintf(stderr, "error: %s: '%s' needs %s, got '%s'\n", where, o->name,
                type_hint(o->type), value ? value : "(nothing)");
        return 2;
    }
    if (o->min < o->max && o->type != CLI_STRING && o->type != CLI_FLAG &&
        o->type != CLI_BOOL && (num < o->min || num > o->max)) {
        fprintf(stderr, "error: %s: '%s' = %s is out of range; use a value from %g to %g\n",
                where, o->name, value, o->min, o->max);
        return 2;
    }
    return 0;
}

char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "error: cannot open '%s': %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) {
            if (ferror(f)) {
                fprintf(stderr, "error: reading '%s': %s\n", path, strerror(errno));
                free(buf);
                buf = NULL;
            }
            break;
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
        fprintf(stderr, "error: cannot read '%s'\n", path);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
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
    size_t len;
    char *buf = cli_read_file(path, &len);
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
        if (o->type != CLI_FLAG && o->ptr) {
            switch (o->type) {
            case CLI_BOOL: fprintf(f, " (default %s)", *(bool *)o->ptr ? "true" : "false"); break;
            case CLI_UINT: case CLI_BYTES:
                fprintf(f, " (default %llu)", (unsigned long long)*(uint64_t *)o->ptr); break;
            case CLI_INT: fprintf(f, " (default %lld)", (long long)*(int64_t *)o->ptr); break;
            case CLI_DOUBLE: fprintf(f, " (default %g)", *(double *)o->ptr); break;
            case CLI_STRING:
                if (*(const char **)o->ptr)
                    fprintf(f, " (default %s)", *(const char **)o->ptr);
                break;
            default: break;
            }
        }
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
            const struct cli_opt *o = find_opt(opts, name);
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
