/* Two RIFL lanes wired back to back in memory: the smallest complete use of
 * the lane engine.  Build: cc two_lanes.c $(pkg-config --cflags --libs rifl) */
#include <stdio.h>
#include <string.h>

#include <rifl/lane.h>

int main(void)
{
    rifl_lane_config cfg = rifl_lane_default_config; /* 256-bit frames, K = 8 */
    cfg.rx_lock_frames = 0;                          /* frames arrive aligned */
    rifl_lane *a, *b;
    char msg[256];
    if (rifl_lane_create(&cfg, &a, msg, sizeof msg) != RIFL_OK ||
        rifl_lane_create(&cfg, &b, msg, sizeof msg) != RIFL_OK) {
        fprintf(stderr, "config refused: %s\n", msg);
        return 1;
    }
    const char *hello = "hello over a lossless link";
    rifl_lane_send(a, hello, strlen(hello)); /* RIFL_ERR_AGAIN when full */

    uint8_t wa[32], wb[32], buf[64];
    for (int slot = 0; slot < 1000; slot++) {
        rifl_lane_tx(a, slot, wa);        /* each lane produces one frame per slot */
        rifl_lane_tx(b, slot, wb);
        rifl_lane_rx(a, slot, wb, NULL);  /* ... and consumes the peer's */
        rifl_lane_rx(b, slot, wa, NULL);
        size_t n;
        int eop;
        if (rifl_lane_read(b, buf, sizeof buf, &n, &eop) == RIFL_OK) {
            printf("slot %d: B got %zu bytes%s: %.*s\n", slot, n, eop ? " (end of packet)" : "",
                   (int)n, buf);
            break;
        }
    }
    rifl_lane_free(a);
    rifl_lane_free(b);
    return 0;
}
