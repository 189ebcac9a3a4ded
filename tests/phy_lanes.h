/* Helpers for the tests of real-link PHYs: a UDP socket bound to an
 * ephemeral loopback port, and two lanes run over two PHYs with every
 * packet checked. */
#ifndef RIFL_TEST_PHY_LANES_H
#define RIFL_TEST_PHY_LANES_H

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testlib.h"
#include "rifl/lane.h"
#include "rifl/phy.h"
#include "rifl/sim/traffic.h"

/* The socket, its port in *port; -1 on failure. */
static inline int test_bound_socket(unsigned *port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &n) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static inline size_t test_pkt_len(uint64_t seq) { return 1 + (size_t)((seq * 2654435761u) % 900); }

/* With UDP PHYs that hold datagrams (gso_datagrams), push them every this
 * many slots (0: never; they go when the hold is full). */
static unsigned test_push_every;

/* Send by content (the PHYs encode each datagram's frames in one batch,
 * the lanes' scramblers deferred) and take each slot's frames in one batch
 * call, as the link driver does; UDP PHYs only. */
static bool test_by_content;

/* Lanes across the two ends for `slots` slots, each sending numbered
 * packets and checking what it reads: every packet once, in order, intact. */
static inline void test_run_lanes(rifl_phy *phy[2], unsigned F, unsigned fpd, unsigned slots,
                           uint64_t *got_out, uint64_t *replays)
{
    rifl_lane_config lc = rifl_lane_default_config;
    lc.frame_bits = F;
    lc.fid_bits = 8;
    lc.link.cable_m = 0;
    lc.link.transceiver_ns = 0;
    /* the round trip the lane must cover (its replay tail, its replay
     * buffer): a frame waits up to a datagram's worth of slots at each end,
     * and the two ends take turns within a slot */
    lc.pipeline_frames = 2 * fpd + 4 + 2 * test_push_every;
    rifl_lane *l[2] = { NULL, NULL };
    for (int i = 0; i < 2; i++) {
        REQUIRE(rifl_lane_create(&lc, &l[i], NULL, 0) == RIFL_OK);
        if (test_by_content) {
            REQUIRE(rifl_phy_udp_set_encoder(phy[i], rifl_lane_frame_bytes(F),
                                             rifl_lane_phy_encode_batch, l[i]) == RIFL_OK);
            REQUIRE(rifl_lane_defer_scrambler(l[i], true) == RIFL_OK);
        }
    }
    uint64_t sent[2] = { 0, 0 }, got[2] = { 0, 0 }, bad = 0;
    static uint8_t pkt[1000], want[1000], buf[2][1000];
    size_t have[2] = { 0, 0 };
    for (unsigned t = 0; t < slots; t++) {
        for (int i = 0; i < 2; i++) {
            size_t n = test_pkt_len(sent[i]);
            rifl_packet_fill(7 + (unsigned)i, sent[i], pkt, n);
            if (rifl_lane_send(l[i], pkt, n) == RIFL_OK)
                sent[i]++;
        }
        for (int i = 0; i < 2; i++) {
            rifl_phy_form form = test_by_content ? RIFL_PHY_CONTENT : RIFL_PHY_WIRE;
            void *w = rifl_phy_tx_buffer(phy[i], form);
            REQUIRE(w != NULL);
            if (test_by_content)
                CHECK_EQ_I(rifl_lane_tx_frame(l[i], t, w), RIFL_OK);
            else
                CHECK_EQ_I(rifl_lane_tx(l[i], t, w), RIFL_OK);
            rifl_phy_frame in[64];
            unsigned n = rifl_phy_exchange(phy[i], t, form, in, 64);
            if (test_by_content) {
                /* the frames handed out lie end to end */
                for (unsigned k = 1; k < n; k++)
                    CHECK((const uint8_t *)in[k].data == (const uint8_t *)in[0].data + k * (F / 8));
                CHECK_EQ_I(rifl_lane_rx_batch(l[i], t, n ? in[0].data : NULL, n), RIFL_OK);
            } else {
                if (!n)
                    rifl_lane_rx(l[i], t, NULL, NULL);
                for (unsigned k = 0; k < n; k++)
                    rifl_lane_rx(l[i], t, in[k].data, NULL);
            }
            if (test_push_every && (t + 1) % test_push_every == 0)
                rifl_phy_udp_push(phy[i]);
            /* read: packets of the other end */
            for (;;) {
                size_t len = 0;
                int eop = 0;
                if (rifl_lane_read(l[i], buf[i] + have[i], sizeof buf[i] - have[i], &len,
                                   &eop) != RIFL_OK)
                    break;
                have[i] += len;
                if (!eop)
                    continue;
                size_t wl = test_pkt_len(got[i]);
                rifl_packet_fill(7 + (unsigned)(1 - i), got[i], want, wl);
                bad += have[i] != wl || memcmp(buf[i], want, wl) != 0;
                got[i]++;
                have[i] = 0;
            }
        }
    }
    CHECK_EQ_U(bad, 0);
    *got_out = got[0] + got[1];
    *replays = rifl_lane_get_stats(l[0])->tx_replay_cycles + rifl_lane_get_stats(l[1])->tx_replay_cycles;
    for (int i = 0; i < 2; i++) {
        /* never more than was sent; what is not read yet is in the
         * sender's queue or on its way */
        CHECK(got[i] <= sent[1 - i] && got[i] > 0);
        rifl_lane_free(l[i]);
    }
}

#endif
