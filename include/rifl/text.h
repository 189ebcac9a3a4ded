/* rifl: small text parsers shared by the CLI, the tests and the fuzzers:
 * hex frames and `key = value` configuration text.  Both take a buffer and a
 * length (no NUL needed), never read past it, and report the first problem
 * with its line number. */
#ifndef RIFL_TEXT_H
#define RIFL_TEXT_H

#include "rifl/api.h"

#include <stddef.h>
#include <stdint.h>
#include "rifl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse hex digits (upper or lower case, no prefix, no separators) into
 * bytes.  The text must hold an even number of digits and at most `max`
 * bytes.  Returns RIFL_OK, RIFL_ERR_PARSE (bad digit or odd count) or
 * RIFL_ERR_BUFFER (too long). */
RIFL_API int rifl_hex_decode(const char *text, size_t len, uint8_t *out, size_t max,
                             size_t *nbytes);

/* Write 2*n lower-case hex digits and a NUL to `out` (size >= 2n+1). */
RIFL_API void rifl_hex_encode(const uint8_t *in, size_t n, char *out);

/* Frame file reader: one frame per line; blank lines and lines starting with
 * '#' are skipped; when a line has several whitespace-separated fields, the
 * last one is the frame (so encode.vectors files are accepted too).
 * Call repeatedly: returns 1 with a frame, 0 at end of input, or a negative
 * error with `err` describing it. */
typedef struct rifl_frame_reader {
    const char *buf;
    size_t len;
    size_t pos;
    unsigned line;       /* line number of the last line read (1-based) */
    unsigned frame_bytes;
} rifl_frame_reader;

RIFL_API void rifl_frame_reader_init(rifl_frame_reader *r, const char *buf, size_t len,
                                     unsigned frame_bytes);
RIFL_API int rifl_frame_reader_next(rifl_frame_reader *r, uint8_t *frame, char *err,
                                    size_t errlen);

/* `key = value` text: one setting per line, '#' starts a comment, keys are
 * [A-Za-z0-9_.-]+, values run to the end of the line with surrounding
 * blanks removed and may be quoted with "...".  The callback gets each pair
 * (NUL-terminated copies) and returns RIFL_OK or an error, which stops the
 * parse.  A leading UTF-8 byte order mark is skipped; lines longer than
 * 1023 bytes or holding a NUL byte are refused. */
typedef int (*rifl_kv_fn)(void *ctx, const char *key, const char *value,
                          unsigned line, char *err, size_t errlen);
RIFL_API int rifl_kv_parse(const char *buf, size_t len, rifl_kv_fn fn, void *ctx,
                           char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
