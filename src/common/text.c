/* Hex and key=value text parsers (see rifl/text.h). */
#include "rifl/text.h"

#include <stdio.h>
#include <string.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int rifl_hex_decode(const char *text, size_t len, uint8_t *out, size_t max,
                    size_t *nbytes)
{
    if ((!text && len) || (!out && max))
        return RIFL_ERR_INVALID_ARG;
    if (len % 2)
        return RIFL_ERR_PARSE;
    if (len / 2 > max)
        return RIFL_ERR_BUFFER;
    for (size_t i = 0; i < len; i += 2) {
        int hi = hexval(text[i]), lo = hexval(text[i + 1]);
        if (hi < 0 || lo < 0)
            return RIFL_ERR_PARSE;
        out[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    if (nbytes)
        *nbytes = len / 2;
    return RIFL_OK;
}

void rifl_hex_encode(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    if (!out)
        return;
    if (!in)
        n = 0;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

void rifl_frame_reader_init(rifl_frame_reader *r, const char *buf, size_t len,
                            unsigned frame_bytes)
{
    if (!r)
        return;
    r->buf = buf;
    r->len = buf ? len : 0;
    r->pos = 0;
    r->line = 0;
    r->frame_bytes = frame_bytes;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

int rifl_frame_reader_next(rifl_frame_reader *r, uint8_t *frame, char *err,
                           size_t errlen)
{
    if (!r || !frame) {
        if (err && errlen)
            snprintf(err, errlen, "no reader or no frame buffer given");
        return RIFL_ERR_INVALID_ARG;
    }
    if (r->frame_bytes < 8 || r->frame_bytes > 256) {
        /* (frames are 64 to 2048 bits) */
        if (err && errlen)
            snprintf(err, errlen, "frames of %u bytes: the width must be 64 to 2048 bits "
                     "(8 to 256 bytes)", r->frame_bytes);
        return RIFL_ERR_INVALID_ARG;
    }
    while (r->pos < r->len) {
        size_t start = r->pos, end = start;
        while (end < r->len && r->buf[end] != '\n')
            end++;
        r->pos = end < r->len ? end + 1 : end;
        r->line++;
        /* trim */
        while (start < end && is_blank(r->buf[start]))
            start++;
        while (end > start && is_blank(r->buf[end - 1]))
            end--;
        if (start == end || r->buf[start] == '#')
            continue;
        /* last field */
        size_t f = end;
        while (f > start && !is_blank(r->buf[f - 1]))
            f--;
        size_t n = 0;
        int rc = rifl_hex_decode(r->buf + f, end - f, frame, r->frame_bytes, &n);
        if (rc == RIFL_OK && n != r->frame_bytes)
            rc = RIFL_ERR_BUFFER;
        if (rc != RIFL_OK) {
            if (err && errlen)
                snprintf(err, errlen,
                         "line %u: expected a frame of %u hex digits (%u bits), "
                         "got %zu characters%s; check --frame-width",
                         r->line, 2 * r->frame_bytes, 8 * r->frame_bytes, end - f,
                         rc == RIFL_ERR_PARSE ? " with a non-hex digit or odd length" : "");
            return RIFL_ERR_PARSE;
        }
        return 1;
    }
    return 0;
}

static int is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

int rifl_kv_parse(const char *buf, size_t len, rifl_kv_fn fn, void *ctx,
                  char *err, size_t errlen)
{
    char key[128], val[1024];
    size_t pos = 0;
    unsigned line = 0;
    if (!fn || (!buf && len))
        return RIFL_ERR_INVALID_ARG;
    /* a UTF-8 byte order mark, as some editors write, is no part of a key */
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        pos = 3;
    while (pos < len) {
        size_t s = pos, e = pos;
        while (e < len && buf[e] != '\n')
            e++;
        pos = e < len ? e + 1 : e;
        line++;
        if (e - s > 1023) {
            snprintf(err, errlen, "line %u: longer than 1023 characters", line);
            return RIFL_ERR_PARSE;
        }
        if (memchr(buf + s, '\0', e - s)) {
            snprintf(err, errlen, "line %u: holds a NUL byte; settings are text, one "
                     "`key = value` per line", line);
            return RIFL_ERR_PARSE;
        }
        /* strip comment (outside quotes) */
        int inq = 0;
        for (size_t i = s; i < e; i++) {
            if (buf[i] == '"')
                inq = !inq;
            else if (buf[i] == '#' && !inq) {
                e = i;
                break;
            }
        }
        while (s < e && is_blank(buf[s]))
            s++;
        while (e > s && is_blank(buf[e - 1]))
            e--;
        if (s == e)
            continue;
        size_t k = s;
        while (k < e && is_key_char(buf[k]))
            k++;
        if (k == s || k - s >= sizeof key) {
            snprintf(err, errlen, "line %u: expected `key = value`, a key of letters, "
                     "digits, '_', '-' or '.'", line);
            return RIFL_ERR_PARSE;
        }
        memcpy(key, buf + s, k - s);
        key[k - s] = '\0';
        size_t v = k;
        while (v < e && is_blank(buf[v]))
            v++;
        if (v < e && (buf[v] == '=' || buf[v] == ':'))
            v++;
        else {
            snprintf(err, errlen, "line %u: missing '=' after key '%s'", line, key);
            return RIFL_ERR_PARSE;
        }
        while (v < e && is_blank(buf[v]))
            v++;
        size_t ve = e;
        if (v < ve && buf[v] == '"') {
            if (ve - v < 2 || buf[ve - 1] != '"') {
                snprintf(err, errlen, "line %u: unterminated quote in value of '%s'",
                         line, key);
                return RIFL_ERR_PARSE;
            }
            v++;
            ve--;
        }
        memcpy(val, buf + v, ve - v);
        val[ve - v] = '\0';
        int rc = fn(ctx, key, val, line, err, errlen);
        if (rc != RIFL_OK)
            return rc;
    }
    return RIFL_OK;
}
