/* Fuzz the `key = value` parser behind `--config` files (rifl_kv_parse,
 * rifl/text.h).  Any bytes parse or fail with a message naming a line of the
 * text.  Every pair handed to the callback has the documented shape: a key
 * of [A-Za-z0-9_.-] that begins its line and is followed by '=' (or ':'), a
 * value of at most 1023 bytes found whole on that line, blanks around it
 * only when the line quotes it, lines in increasing order.  The same text
 * behind a UTF-8 byte order mark gives the same pairs and the same answer;
 * an error returned by the callback stops the parse at once and is
 * returned; the pairs written back as `key = "value"` lines read back the
 * same; a message buffer of 5 bytes gets the message's first 4 and is never
 * overrun. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
    const char *buf;  /* the text parsed, without its byte order mark */
    size_t len;
    unsigned line;    /* the line starting at pos (1-based) */
    size_t pos;
    unsigned calls;
    unsigned last_line;
    unsigned stop_at; /* the callback refuses its stop_at-th pair (0: none) */
    uint64_t h_pairs; /* every key and value, in order */
    uint64_t h_lines; /* every line number, in order */
    char *back;       /* the pairs as `key = "value"` lines */
    size_t back_len, back_cap;
    int back_ok;      /* every pair could be written back */
};

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static int key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.';
}

static uint64_t mix(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull; /* (an end mark: "ab","c" is not "a","bc") */
}

/* The bytes of line `line` of the text, [*s, *e) without its '\n'. */
static void find_line(struct seen *c, unsigned line, size_t *s, size_t *e)
{
    while (c->line < line && c->pos < c->len) {
        const char *nl = memchr(c->buf + c->pos, '\n', c->len - c->pos);
        if (!nl)
            __builtin_trap(); /* a line number past the text */
        c->pos = (size_t)(nl - c->buf) + 1;
        c->line++;
    }
    if (c->line != line)
        __builtin_trap();
    const char *nl = memchr(c->buf + c->pos, '\n', c->len - c->pos);
    *s = c->pos;
    *e = nl ? (size_t)(nl - c->buf) : c->len;
}

/* Whether `needle` (n > 0 bytes) occurs in hay[0..len). */
static int contains(const char *hay, size_t len, const char *needle, size_t n)
{
    for (size_t i = 0; i + n <= len; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, n) == 0)
            return 1;
    return 0;
}

static void write_back(struct seen *c, const char *key, const char *value)
{
    size_t kn = strlen(key), vn = strlen(value), need = kn + vn + 6;
    if (!c->back_ok)
        return;
    /* a value holding '"' has no quoted form; a line has at most 1023 bytes */
    if (strchr(value, '"') || need - 1 > 1023) {
        c->back_ok = 0;
        return;
    }
    if (c->back_len + need > c->back_cap) {
        size_t cap = 2 * c->back_cap + need;
        char *nb = realloc(c->back, cap);
        if (!nb)
            __builtin_trap();
        c->back = nb;
        c->back_cap = cap;
    }
    char *p = c->back + c->back_len;
    memcpy(p, key, kn);
    memcpy(p + kn, " = \"", 4);
    memcpy(p + kn + 4, value, vn);
    memcpy(p + kn + 4 + vn, "\"\n", 2);
    c->back_len += need;
}

static int on_pair(void *ctx, const char *key, const char *value, unsigned line, char *err,
                   size_t errlen)
{
    struct seen *c = ctx;
    size_t kn = strlen(key), vn = strlen(value);
    if (kn == 0 || kn > 127 || vn > 1023 || line <= c->last_line)
        __builtin_trap();
    for (size_t i = 0; i < kn; i++)
        if (!key_char(key[i]))
            __builtin_trap();
    size_t s, e;
    find_line(c, line, &s, &e);
    const char *ln = c->buf + s;
    size_t n = e - s, k = 0;
    while (k < n && blank(ln[k]))
        k++;
    /* the key begins the line and '=' or ':' follows it */
    if (n - k < kn || memcmp(ln + k, key, kn) != 0)
        __builtin_trap();
    k += kn;
    while (k < n && blank(ln[k]))
        k++;
    if (k == n || (ln[k] != '=' && ln[k] != ':'))
        __builtin_trap();
    /* the value is on the line, after the separator */
    if (vn && (vn > n - k - 1 || !contains(ln + k + 1, n - k - 1, value, vn)))
        __builtin_trap();
    /* blanks around a value and a '#' in it only inside quotes */
    if (vn && (blank(value[0]) || blank(value[vn - 1]) || strchr(value, '#')) &&
        !memchr(ln, '"', n))
        __builtin_trap();
    c->last_line = line;
    c->h_pairs = mix(mix(c->h_pairs, key, kn), value, vn);
    c->h_lines = c->h_lines * 31 + line;
    write_back(c, key, value);
    if (++c->calls == c->stop_at) {
        if (errlen)
            snprintf(err, errlen, "stopped");
        return RIFL_ERR_CONFIG;
    }
    return RIFL_OK;
}

static unsigned count_lines(const char *buf, size_t len)
{
    unsigned n = 0;
    for (size_t i = 0; i < len; i++)
        n += buf[i] == '\n';
    return n + (len && buf[len - 1] != '\n');
}

/* Parse `buf` (`skip` bytes of byte order mark first) into *c; the answer. */
static int run(struct seen *c, const char *buf, size_t len, size_t skip, unsigned stop_at,
               char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->buf = buf + skip;
    c->len = len - skip;
    c->line = 1;
    c->stop_at = stop_at;
    c->back_ok = 1;
    if (errlen)
        err[0] = '\0';
    int rc = rifl_kv_parse(buf, len, on_pair, c, err, errlen);
    if (rc == RIFL_ERR_CONFIG) {
        if (!stop_at || c->calls != stop_at) /* only the callback's error */
            __builtin_trap();
    } else if (c->calls > count_lines(c->buf, c->len)) {
        __builtin_trap();
    } else if (rc == RIFL_ERR_PARSE) {
        /* "line N: ...", N after the last pair's line and within the text */
        char *end = err;
        unsigned long ln = strncmp(err, "line ", 5) ? 0 : strtoul(err + 5, &end, 10);
        if (errlen >= 64 && (ln <= c->last_line || ln > count_lines(c->buf, c->len) ||
                            *end != ':'))
            __builtin_trap();
    } else if (rc != RIFL_OK) {
        __builtin_trap();
    }
    if (errlen && !memchr(err, '\0', errlen))
        __builtin_trap();
    return rc;
}

static int has_bom(const uint8_t *data, size_t size)
{
    return size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0;
}

/* The callback's error stops the parse at its pair, with a short message
 * buffer. */
static void check_stop(const struct seen *all, const char *text, size_t size, size_t skip)
{
    struct seen c;
    char *small = malloc(5);
    if (!small)
        __builtin_trap();
    int rc = run(&c, text, size, skip, all->calls / 2 + 1, small, 5);
    if (rc != RIFL_ERR_CONFIG || c.calls != all->calls / 2 + 1 || strcmp(small, "stop"))
        __builtin_trap();
    free(small);
    free(c.back);
}

/* A message buffer of 5 bytes: the same answer, the message cut short. */
static void check_short(const struct seen *all, int rc, const char *err, const char *text,
                        size_t size, size_t skip)
{
    struct seen c;
    char *small = malloc(5);
    if (!small)
        __builtin_trap();
    if (run(&c, text, size, skip, 0, small, 5) != rc || c.calls != all->calls ||
        strncmp(small, err, 4) || strlen(small) != (strlen(err) < 4 ? strlen(err) : 4))
        __builtin_trap();
    free(small);
    free(c.back);
}

/* The same text behind a byte order mark: the same pairs, lines and answer. */
static void check_bom(const struct seen *all, int rc, const char *err, const uint8_t *data,
                      size_t size)
{
    struct seen c;
    char err2[256];
    char *text = malloc(size + 3);
    if (!text)
        __builtin_trap();
    memcpy(text, "\xEF\xBB\xBF", 3);
    if (size)
        memcpy(text + 3, data, size);
    if (run(&c, text, size + 3, 3, 0, err2, sizeof err2) != rc || c.calls != all->calls ||
        c.h_pairs != all->h_pairs || c.h_lines != all->h_lines || strcmp(err, err2))
        __builtin_trap();
    free(text);
    free(c.back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = size ? (const char *)data : ""; /* (no bytes may come as NULL) */
    size_t skip = has_bom(data, size) ? 3 : 0;
    struct seen all;
    char err[256];
    int rc = run(&all, text, size, skip, 0, err, sizeof err);
    if (rc != RIFL_OK && !err[0])
        __builtin_trap(); /* every failure carries a message */
    check_short(&all, rc, err, text, size, skip);
    if (all.calls > 0)
        check_stop(&all, text, size, skip);
    if (!skip)
        check_bom(&all, rc, err, data, size);
    if (rc == RIFL_OK && all.back_ok && all.calls > 0) {
        struct seen again;
        if (run(&again, all.back, all.back_len, 0, 0, err, sizeof err) != RIFL_OK ||
            again.calls != all.calls || again.h_pairs != all.h_pairs)
            __builtin_trap();
        free(again.back);
    }
    free(all.back);
    return 0;
}
