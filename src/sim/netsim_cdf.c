/* Message sizes for `sim net` from a CDF file (rifl/sim/netsim.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/sim/netsim.h"

#define CDF_MAX_BYTES (1u << 20)

int rifl_net_cdf_parse(const char *text, size_t len, rifl_net_cdf *cdf, char *err,
                       size_t errlen)
{
    if (!text || !cdf)
        return rifl_null_arg(err, errlen, "rifl_net_cdf_parse", !text ? "text" : "cdf");
    memset(cdf, 0, sizeof *cdf);
    size_t pos = 0;
    unsigned line = 0, last_line = 0; /* the last point's line */
    while (pos < len) {
        line++;
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        char buf[128];
        size_t n = end - pos;
        const char *hash = memchr(text + pos, '#', n);
        if (hash)
            n = (size_t)(hash - (text + pos));
        if (n >= sizeof buf) {
            rifl_msg(err, errlen, "line %u: too long; write \"BYTES P\"", line);
            return RIFL_ERR_PARSE;
        }
        memcpy(buf, text + pos, n);
        buf[n] = '\0';
        pos = end + 1;
        char *s = buf;
        if (memchr(buf, '\0', n)) {
            rifl_msg(err, errlen, "line %u: a NUL byte; the file must be text", line);
            return RIFL_ERR_PARSE;
        }
        while (isspace((unsigned char)*s))
            s++;
        if (!*s)
            continue;
        char *e1, *e2;
        errno = 0;
        double b = strtod(s, &e1);
        double p = e1 != s ? strtod(e1, &e2) : 0;
        if (e1 == s || e2 == e1 || errno) {
            rifl_msg(err, errlen, "line %u: '%.40s' is not two numbers; write \"BYTES P\"",
                     line, s);
            return RIFL_ERR_PARSE;
        }
        while (isspace((unsigned char)*e2))
            e2++;
        if (*e2) {
            rifl_msg(err, errlen, "line %u: '%.40s' after the two numbers; write \"BYTES P\"",
                     line, e2);
            return RIFL_ERR_PARSE;
        }
        if (!(b >= 1 && b <= CDF_MAX_BYTES) || b != floor(b)) {
            rifl_msg(err, errlen, "line %u: %g bytes; give a whole number from 1 to %u", line,
                     b, CDF_MAX_BYTES);
            return RIFL_ERR_PARSE;
        }
        if (!(p >= 0 && p <= 100)) {
            rifl_msg(err, errlen, "line %u: P = %g; give a fraction 0..1 (or a percentage)",
                     line, p);
            return RIFL_ERR_PARSE;
        }
        if (cdf->n == RIFL_NET_CDF_MAX) {
            rifl_msg(err, errlen, "line %u: more than %d points; merge some", line,
                     RIFL_NET_CDF_MAX);
            return RIFL_ERR_PARSE;
        }
        if (cdf->n && (b < cdf->bytes[cdf->n - 1] || p < cdf->p[cdf->n - 1])) {
            rifl_msg(err, errlen, "line %u: %g bytes at %g after %u at %g; sizes and P must "
                                  "not decrease",
                     line, b, p, cdf->bytes[cdf->n - 1], cdf->p[cdf->n - 1]);
            return RIFL_ERR_PARSE;
        }
        cdf->bytes[cdf->n] = (uint32_t)b;
        cdf->p[cdf->n] = p;
        cdf->n++;
        last_line = line;
    }
    if (!cdf->n) {
        rifl_msg(err, errlen, "no points; write one \"BYTES P\" per line, the last P 1");
        return RIFL_ERR_PARSE;
    }
    double last = cdf->p[cdf->n - 1];
    if (last == 100) {
        for (unsigned k = 0; k < cdf->n; k++)
            cdf->p[k] /= 100;
    } else if (last != 1) {
        rifl_msg(err, errlen, "line %u: the last P is %g; it must be 1 (or 100 for "
                              "percentages): every message is at most the largest size",
                 last_line, last);
        return RIFL_ERR_PARSE;
    }
    return RIFL_OK;
}

uint32_t rifl_net_cdf_size(const rifl_net_cdf *c, double u)
{
    if (!c || !c->n)
        return 1;
    unsigned k = 0;
    while (k + 1 < c->n && c->p[k] <= u)
        k++;
    if (k == 0 || c->p[k] <= u)
        return c->bytes[k];
    double p0 = c->p[k - 1], p1 = c->p[k];
    double b0 = c->bytes[k - 1], b1 = c->bytes[k];
    double b = p1 > p0 ? b0 + (b1 - b0) * (u - p0) / (p1 - p0) : b1;
    uint32_t r = (uint32_t)llround(b);
    return r < 1 ? 1 : r;
}
