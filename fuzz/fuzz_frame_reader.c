/* Fuzz the text parsers: the frame-file reader behind `rifl decode` and the
 * `key = value` config parser. */
#include <stdint.h>
#include <string.h>

#include "rifl/frame.h"
#include "rifl/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_cb(void *ctx, const char *key, const char *value, unsigned line,
                    char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    (void)line;
    size_t *n = ctx;
    *n += strlen(key) + strlen(value);
    return RIFL_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const unsigned widths[] = { 64, 128, 256, 512, 1024, 2048 };
    unsigned F = widths[data[0] % 6];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;

    rifl_frame_reader r;
    rifl_frame_reader_init(&r, text, len, F / 8);
    uint8_t frame[RIFL_FRAME_MAX_BYTES];
    char err[256];
    uint64_t st = 0;
    int rc;
    while ((rc = rifl_frame_reader_next(&r, frame, err, sizeof err)) == 1) {
        rifl_frame_info info;
        rifl_frame_decode(frame, F, &st, NULL, &info);
    }
    if (rc < 0 && err[0] == '\0')
        __builtin_trap(); /* every error must carry a message */

    size_t total = 0;
    rifl_kv_parse(text, len, count_cb, &total, err, sizeof err);
    return 0;
}
