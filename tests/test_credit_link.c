/* The credit engine on a link: link states, FCP handling and counters, and
 * seeded randomised runs over a lossy channel (FCPs delayed, lost and
 * corrupted, data corrupted): no overflow, no credit leak, every VL moves,
 * arbitration shares follow the tables; ON/OFF comparison. */
#include "testlib.h"

#include "rifl/credit.h"
#include "rifl/sim/credit_sim.h"
#include "rifl/rng.h"

static rifl_credit *mk(unsigned vls, uint64_t buf)
{
    rifl_credit_config c = rifl_credit_default_config;
    c.data_vls = vls;
    c.rx_buffer_bytes = buf;
    c.fcp_period = 1000;
    rifl_credit *e = NULL;
    char msg[256];
    int rc = rifl_credit_create(&c, &e, msg, sizeof msg);
    CHECK_MSG(rc == RIFL_OK, "%s", msg);
    return e;
}

/* Move one item from `from` to `to` when there is one. */
static int hop(rifl_credit *from, rifl_credit *to, uint64_t now)
{
    rifl_credit_item it;
    if (rifl_credit_poll(from, now, &it) != RIFL_OK)
        return 0;
    if (it.kind == RIFL_CREDIT_ITEM_FCP)
        rifl_credit_rx_fcp(to, it.fcp, 8, now);
    else
        rifl_credit_rx_data(to, it.vl, it.len);
    return (int)it.kind;
}

/* FCPs both ways until the link is active; the time reached. */
static uint64_t activate(rifl_credit *a, rifl_credit *b)
{
    uint64_t now = 0;
    for (; now < 3000; now += 10) {
        hop(a, b, now);
        hop(b, a, now);
    }
    CHECK(rifl_credit_state(a) == RIFL_FC_LINK_ACTIVE);
    return now;
}

static void t_link_states(void)
{
    rifl_credit *a = mk(2, 4096), *b = mk(2, 4096);
    REQUIRE(a && b);
    CHECK_EQ_U(rifl_credit_state(a), RIFL_FC_LINK_INIT);
    CHECK_EQ_I(rifl_credit_enqueue(a, 0, 100, 7), RIFL_OK);
    CHECK_EQ_I(rifl_credit_enqueue(a, 15, 256, 8), RIFL_OK);
    /* INIT: FCPs with Op 1 first, then only VL15 goes */
    rifl_credit_item it;
    CHECK_EQ_I(rifl_credit_poll(a, 0, &it), RIFL_OK);
    CHECK_EQ_U(it.kind, RIFL_CREDIT_ITEM_FCP);
    CHECK_EQ_U(it.fcp[0] >> 4, RIFL_FCP_OP_INIT);
    CHECK_EQ_U((it.fcp[0] & 0xFu) << 8 | it.fcp[1], 0); /* FCTBS: nothing sent yet */
    CHECK_EQ_I(rifl_credit_poll(a, 0, &it), RIFL_OK); /* VL1's FCP */
    CHECK_EQ_I(rifl_credit_poll(a, 0, &it), RIFL_OK);
    CHECK_EQ_U(it.kind, RIFL_CREDIT_ITEM_DATA);
    CHECK_EQ_U(it.vl, 15);
    CHECK_EQ_U(it.tag, 8);
    CHECK_EQ_I(rifl_credit_poll(a, 0, &it), RIFL_ERR_AGAIN); /* VL0 waits */
    /* data arriving in INIT is dropped and counted */
    CHECK_EQ_I(rifl_credit_rx_data(b, 0, 64), RIFL_ERR_STATE);
    CHECK_EQ_U(rifl_credit_get_stats(b)->rx_not_ready, 1);
    /* exchange FCPs: both arm, then both go active */
    uint64_t now = 0;
    for (int i = 0; i < 8; i++, now += 10) {
        hop(a, b, now);
        hop(b, a, now);
    }
    for (now = 1000; now < 3000; now += 10) {
        hop(a, b, now);
        hop(b, a, now);
    }
    CHECK_EQ_U(rifl_credit_state(a), RIFL_FC_LINK_ACTIVE);
    CHECK_EQ_U(rifl_credit_state(b), RIFL_FC_LINK_ACTIVE);
    CHECK_EQ_U(rifl_credit_get_stats(b)->vl[0].rx_packets, 1);
    CHECK_EQ_U(rifl_credit_tx_regs(a, 0)->fctbs, 2);
    /* FCPs sent in ARM/ACTIVE use Op 0 */
    CHECK(rifl_credit_get_stats(a)->fcp_tx > rifl_credit_get_stats(a)->fcp_tx_init);
    /* going back to INIT resets the registers */
    rifl_credit_set_state(a, RIFL_FC_LINK_INIT);
    CHECK_EQ_U(rifl_credit_tx_regs(a, 0)->fctbs, 0);
    CHECK_EQ_U(rifl_credit_tx_regs(a, 0)->cl, 0);
    rifl_credit_free(a);
    rifl_credit_free(b);
}

static void t_fcp_drops_counted(void)
{
    rifl_credit *a = mk(2, 4096);
    REQUIRE(a);
    uint8_t b[8];
    rifl_fcp f = { 0, 5, 1, 64 };
    rifl_fcp_encode(&f, b);
    b[5] ^= 1; /* LPCRC */
    CHECK_EQ_I(rifl_credit_rx_fcp(a, b, 8, 0), RIFL_ERR_FRAME);
    f.vl = 15; /* VL15 is never flow controlled */
    rifl_fcp_encode(&f, b);
    CHECK_EQ_I(rifl_credit_rx_fcp(a, b, 8, 0), RIFL_ERR_FRAME);
    f.vl = 3; /* unused VL */
    rifl_fcp_encode(&f, b);
    CHECK_EQ_I(rifl_credit_rx_fcp(a, b, 8, 0), RIFL_ERR_FRAME);
    f.vl = 1;
    rifl_fcp_encode(&f, b);
    b[0] |= 0x70; /* Op 7 */
    uint16_t crc = rifl_fcp_crc16(b, 4);
    b[4] = (uint8_t)(crc >> 8);
    b[5] = (uint8_t)crc;
    CHECK_EQ_I(rifl_credit_rx_fcp(a, b, 8, 0), RIFL_ERR_FRAME);
    CHECK_EQ_I(rifl_credit_rx_fcp(a, b, 3, 0), RIFL_ERR_FRAME);
    const rifl_credit_stats *st = rifl_credit_get_stats(a);
    CHECK_EQ_U(st->fcp_rx_drop[RIFL_FCP_BAD_CRC], 1);
    CHECK_EQ_U(st->fcp_rx_drop[RIFL_FCP_BAD_OP], 1);
    CHECK_EQ_U(st->fcp_rx_drop[RIFL_FCP_SHORT], 1);
    CHECK_EQ_U(st->fcp_rx_bad_vl, 2);
    CHECK_EQ_U(st->fcp_rx_good, 0);
    /* a good one: CL and ABR move, the resync is counted */
    f.op = 0;
    rifl_fcp_encode(&f, b);
    CHECK_EQ_I(rifl_credit_rx_fcp(a, b, 8, 0), RIFL_OK);
    CHECK_EQ_U(rifl_credit_tx_regs(a, 1)->cl, 64);
    CHECK_EQ_U(rifl_credit_rx_regs(a, 1)->abr, 5);
    CHECK_EQ_U(st->abr_resyncs, 1);
    CHECK_EQ_U(st->abr_resync_blocks, 5);
    /* an FCCL more than 2048 ahead of FCTBS cannot happen on a correct
     * link: dropped and counted, CL and ABR unchanged */
    f.fccl = 64 + 2049;
    f.fctbs = 9;
    rifl_fcp_encode(&f, b);
    CHECK_EQ_I(rifl_credit_rx_fcp(a, b, 8, 0), RIFL_ERR_FRAME);
    CHECK_EQ_U(st->fcp_rx_bad_fccl, 1);
    CHECK_EQ_U(rifl_credit_tx_regs(a, 1)->cl, 64);
    CHECK_EQ_U(rifl_credit_rx_regs(a, 1)->abr, 5);
    f.fccl = 2048; /* exactly the cap ahead: fine */
    rifl_fcp_encode(&f, b);
    CHECK_EQ_I(rifl_credit_rx_fcp(a, b, 8, 0), RIFL_OK);
    CHECK_EQ_U(rifl_credit_tx_regs(a, 1)->cl, 2048);
    /* VL15 receive buffer: 4 packets, then drops counted */
    int ok = 0;
    for (int i = 0; i < 6; i++)
        ok += rifl_credit_rx_data(a, 15, 100) == RIFL_OK;
    CHECK_EQ_I(ok, 4);
    CHECK_EQ_U(st->vl15_drops, 2);
    CHECK_EQ_I(rifl_credit_rx_release(a, 15, 100, 0), RIFL_OK);
    CHECK_EQ_I(rifl_credit_rx_data(a, 15, 100), RIFL_OK);
    /* config errors explain themselves */
    rifl_credit_config c = rifl_credit_default_config;
    char msg[256];
    rifl_credit *e;
    c.fcp_period = 70000;
    CHECK_EQ_I(rifl_credit_create(&c, &e, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "65536") != NULL);
    c = rifl_credit_default_config;
    c.rx_buffer_bytes = 1024;
    CHECK_EQ_I(rifl_credit_create(&c, &e, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "largest packet") != NULL);
    rifl_credit_free(a);
}

/* Periodic FCPs: at least one per VL per period, even with no traffic. */
static void t_fcp_period(void)
{
    rifl_credit *a = mk(3, 4096);
    REQUIRE(a);
    rifl_credit_item it;
    uint64_t last[3] = { 0 }, worst = 0;
    int seen[3] = { 0 };
    for (uint64_t now = 0; now < 20000; now++) {
        uint64_t due = rifl_credit_next_due(a, now);
        CHECK(due > now);
        while (rifl_credit_poll(a, now, &it) == RIFL_OK) {
            REQUIRE(it.kind == RIFL_CREDIT_ITEM_FCP && it.vl < 3);
            if (seen[it.vl] && now - last[it.vl] > worst)
                worst = now - last[it.vl];
            seen[it.vl] = 1;
            last[it.vl] = now;
        }
    }
    CHECK(worst <= 1000);
    CHECK(worst >= 999);
    CHECK_EQ_U(rifl_credit_get_stats(a)->fcp_tx, 3 * 20);
    rifl_credit_free(a);
    /* the period, the largest packet and the other VLs' FCPs must stay below
     * 65536 symbol times */
    rifl_credit_config c = rifl_credit_default_config;
    char msg[300];
    c.data_vls = 4;
    c.max_packet_bytes = 4096;
    c.fcp_period = 65535 - 4096 - 3 * 8;
    CHECK_EQ_I(rifl_credit_config_check(&c, msg, sizeof msg), RIFL_OK);
    c.fcp_period++;
    CHECK_EQ_I(rifl_credit_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "at most 61415") != NULL);
    c.fcp_period = 4096;
    c.max_packet_bytes = 65536;
    CHECK_EQ_I(rifl_credit_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "lower the largest packet to at most 61415 bytes") != NULL);
}

/* ---- randomised runs through the simulator ------------------------------- */

static void check_run(const rifl_csim_config *c, rifl_csim_result *r)
{
    char msg[256] = "";
    int rc = rifl_csim_run(c, r, msg, sizeof msg);
    CHECK_MSG(rc == RIFL_OK, "%s", msg);
}

static void t_random_lossy(void)
{
    int runs = test_long_run ? 60 : 12;
    rifl_rng r;
    rifl_rng_seed(&r, test_seed);
    for (int i = 0; i < runs; i++) {
        rifl_csim_config c;
        rifl_csim_default_config(&c);
        c.seed = rifl_rng_next(&r);
        c.vls = (unsigned)rifl_rng_range(&r, 1, 8);
        c.duration = test_long_run ? 20000000 : 1500000;
        c.one_way = rifl_rng_range(&r, 10, 4000);
        c.jitter = rifl_rng_below(&r, 2000);
        c.min_len = (uint32_t)rifl_rng_range(&r, 1, 256);
        c.max_len = (uint32_t)rifl_rng_range(&r, c.min_len, 4096);
        c.chunk_bytes = 64u << rifl_rng_below(&r, 3);
        c.buffer_bytes = rifl_rng_range(&r, 2 * 4096, 64 * 1024) / c.chunk_bytes * c.chunk_bytes;
        /* the largest packet must fit the worst-case space of an empty VL */
        if (c.buffer_bytes < (uint64_t)rifl_fc_blocks(c.max_len) * c.chunk_bytes)
            c.buffer_bytes = (uint64_t)rifl_fc_blocks(c.max_len) * c.chunk_bytes;
        for (unsigned v = 0; v < c.vls; v++) {
            c.load[v] = rifl_rng_chance(&r, 0.5) ? 1.0 : 0.05 + 0.5 * rifl_rng_double(&r);
            c.drain[v] = 0.05 + rifl_rng_double(&r);
        }
        c.stall_on = (double)rifl_rng_range(&r, 5000, 100000);
        c.stall_off = (double)rifl_rng_range(&r, 1000, 50000);
        c.fcp_loss = 0.3 * rifl_rng_double(&r);
        c.fcp_corrupt = 0.3 * rifl_rng_double(&r);
        c.data_corrupt = 0.02 * rifl_rng_double(&r);
        /* (an FCP must go within 65535 symbol times: the period, a packet
         * going and the other VLs' FCPs) */
        c.fcp_period = (uint32_t)rifl_rng_range(&r, 256, 65535 - c.max_len - 8 * (c.vls - 1));
        c.fcp_min_gap = (uint32_t)rifl_rng_below(&r, 512);
        rifl_csim_result res;
        check_run(&c, &res);
        CHECK_MSG(res.rx_overflow == 0, "seed %llu: %llu overflow drops",
                  (unsigned long long)c.seed, (unsigned long long)res.rx_overflow);
        CHECK_MSG(res.converged, "seed %llu: credit leaked %llu blocks",
                  (unsigned long long)c.seed, (unsigned long long)res.leaked_blocks);
        for (unsigned v = 0; v < c.vls; v++) {
            const rifl_csim_vl_result *x = &res.vl[v];
            CHECK_MSG(x->drops == 0, "seed %llu VL%u drops", (unsigned long long)c.seed, v);
            CHECK_MSG(x->max_occupancy <= c.buffer_bytes / c.chunk_bytes * c.chunk_bytes,
                      "seed %llu VL%u held %llu", (unsigned long long)c.seed, v,
                      (unsigned long long)x->max_occupancy);
            /* every VL keeps moving: all it sent arrives by the end of the
             * drain, and it got a real share of the run */
            uint64_t lost_to_corruption = res.data_corrupted ? x->sent_bytes : 0;
            CHECK_MSG(x->delivered_total + lost_to_corruption >= x->sent_bytes,
                      "seed %llu VL%u", (unsigned long long)c.seed, v);
            /* ... and got a fair part of the least of what its source
             * offered, what its consumer could take and its equal share of
             * the line */
            double bound = (double)x->offered_bytes < x->capacity_bytes
                               ? (double)x->offered_bytes : x->capacity_bytes;
            if (bound > (double)c.duration / c.vls)
                bound = (double)c.duration / c.vls;
            CHECK_MSG(x->delivered_bytes > 0 &&
                      (double)(x->delivered_bytes + c.buffer_bytes + c.max_len) >= 0.1 * bound,
                      "seed %llu VL%u delivered %llu of %llu offered, %.0f takeable",
                      (unsigned long long)c.seed, v, (unsigned long long)x->delivered_bytes,
                      (unsigned long long)x->offered_bytes, x->capacity_bytes);
        }
        /* faults were really injected and really handled */
        if (c.fcp_loss > 0.01)
            CHECK(res.fcp_lost > 0);
        if (res.fcp_corrupted)
            CHECK_EQ_U(res.fcp_rejected, res.fcp_corrupted);
        if (res.data_corrupted)
            CHECK(res.abr_resyncs > 0);
    }
}

/* One end re-initialises (its registers back to 0) while the other is
 * active: the other starts again with it, and the buffer never overflows. */
static void t_peer_reinit(void)
{
    rifl_credit *a = mk(1, 32768), *b = mk(1, 32768);
    REQUIRE(a && b);
    uint64_t now = activate(a, b);
    /* traffic that moves A's FCTBS well away from 0, the consumer keeping up */
    for (int i = 0; i < 40; i++) {
        REQUIRE(rifl_credit_enqueue(a, 0, 4096, (uint64_t)i) == RIFL_OK);
        for (int k = 0; k < 50; k++, now += 10) {
            hop(a, b, now);
            hop(b, a, now);
        }
        rifl_credit_rx_release(b, 0, 4096, now);
    }
    rifl_credit_set_state(b, RIFL_FC_LINK_INIT);
    /* then 64 more packets with B's consumer stopped, B's FCPs first: B must
     * never overflow */
    int queued = 0;
    for (; now < 400000; now += 10) {
        if (queued < 64 && rifl_credit_enqueue(a, 0, 4096, 100u + (unsigned)queued) == RIFL_OK)
            queued++;
        hop(b, a, now);
        hop(a, b, now);
    }
    CHECK_EQ_U(rifl_credit_get_stats(a)->peer_reinits, 1);
    CHECK_EQ_U(rifl_credit_get_stats(b)->rx_overflow, 0);
    CHECK_EQ_U(rifl_credit_state(a), RIFL_FC_LINK_ACTIVE);
    CHECK_EQ_U(rifl_credit_state(b), RIFL_FC_LINK_ACTIVE);
    /* B's buffer filled to what it holds: 8 packets of 4 KiB */
    CHECK_EQ_U(rifl_credit_get_stats(b)->vl[0].rx_packets, 40 + 8);
    rifl_credit_free(a);
    rifl_credit_free(b);
}

/* An FCP of Op 1 whose FCCL is impossible is dropped like any other bad
 * FCP: the link stays active and no register moves, only fcp_rx_bad_fccl
 * counts it.  A good one re-initialises, its FCCL taken against the FCTBS
 * of 0 this end starts again with. */
static void t_bad_reinit_dropped(void)
{
    rifl_credit *a = mk(2, 32768), *b = mk(2, 32768);
    REQUIRE(a && b);
    uint64_t now = activate(a, b);
    /* A's FCTBS on VL0 to 1024 blocks, B's consumer keeping up */
    for (int i = 0; i < 16; i++) {
        REQUIRE(rifl_credit_enqueue(a, 0, 4096, (uint64_t)i) == RIFL_OK);
        for (int k = 0; k < 50; k++, now += 10) {
            hop(a, b, now);
            hop(b, a, now);
        }
        rifl_credit_rx_release(b, 0, 4096, now);
    }
    REQUIRE(rifl_credit_tx_regs(a, 0)->fctbs == 1024);
    REQUIRE(rifl_credit_state(a) == RIFL_FC_LINK_ACTIVE);
    rifl_fc_tx tx[2];
    rifl_fc_rx rx[2];
    for (unsigned v = 0; v < 2; v++) {
        tx[v] = *rifl_credit_tx_regs(a, v);
        rx[v] = *rifl_credit_rx_regs(a, v);
    }
    rifl_credit_stats want = *rifl_credit_get_stats(a);
    /* FCCL 3000: within 2048 of the old FCTBS (1024) but not of the 0 an
     * engine starting again has, so impossible for a peer that restarted */
    uint8_t buf[8];
    rifl_fcp f = { .op = RIFL_FCP_OP_INIT, .fctbs = 0, .vl = 0, .fccl = 3000 };
    rifl_fcp_encode(&f, buf);
    CHECK_EQ_I(rifl_credit_rx_fcp(a, buf, 8, now), RIFL_ERR_FRAME);
    want.fcp_rx_bad_fccl++;
    CHECK_EQ_U(rifl_credit_state(a), RIFL_FC_LINK_ACTIVE);
    CHECK_EQ_U(rifl_credit_get_stats(a)->peer_reinits, 0);
    CHECK_EQ_U(rifl_credit_get_stats(a)->fcp_rx_bad_fccl, want.fcp_rx_bad_fccl);
    CHECK(memcmp(rifl_credit_get_stats(a), &want, sizeof want) == 0);
    for (unsigned v = 0; v < 2; v++) {
        const rifl_fc_tx *t = rifl_credit_tx_regs(a, v);
        const rifl_fc_rx *r = rifl_credit_rx_regs(a, v);
        CHECK_EQ_U(t->fctbs, tx[v].fctbs);
        CHECK_EQ_U(t->cl, tx[v].cl);
        CHECK_EQ_U(r->abr, rx[v].abr);
        CHECK_EQ_U(r->free_chunks, rx[v].free_chunks);
        CHECK_EQ_U(r->resyncs, rx[v].resyncs);
    }
    /* the link still carries data: a packet goes and B takes it */
    uint64_t got = rifl_credit_get_stats(b)->vl[0].rx_packets;
    REQUIRE(rifl_credit_enqueue(a, 0, 4096, 99) == RIFL_OK);
    for (int k = 0; k < 50; k++, now += 10) {
        hop(a, b, now);
        hop(b, a, now);
    }
    CHECK_EQ_U(rifl_credit_get_stats(b)->vl[0].rx_packets, got + 1);
    CHECK_EQ_U(rifl_credit_state(a), RIFL_FC_LINK_ACTIVE);
    /* the same FCP with an FCTBS other than 0, which no peer initialising
     * sends: dropped, nothing moves */
    want = *rifl_credit_get_stats(a);
    for (unsigned v = 0; v < 2; v++)
        rx[v] = *rifl_credit_rx_regs(a, v);
    f.fccl = 100;
    f.fctbs = 5;
    rifl_fcp_encode(&f, buf);
    CHECK_EQ_I(rifl_credit_rx_fcp(a, buf, 8, now), RIFL_ERR_FRAME);
    want.fcp_rx_bad_fctbs++;
    CHECK_EQ_U(rifl_credit_state(a), RIFL_FC_LINK_ACTIVE);
    CHECK(memcmp(rifl_credit_get_stats(a), &want, sizeof want) == 0);
    CHECK_EQ_U(rifl_credit_rx_regs(a, 0)->abr, rx[0].abr);
    /* FCCL 100: impossible against the old FCTBS (1088) but right for a
     * peer that restarted: A starts again and takes it */
    f.fctbs = 0;
    rifl_fcp_encode(&f, buf);
    CHECK_EQ_I(rifl_credit_rx_fcp(a, buf, 8, now), RIFL_OK);
    CHECK_EQ_U(rifl_credit_state(a), RIFL_FC_LINK_INIT);
    CHECK_EQ_U(rifl_credit_get_stats(a)->peer_reinits, 1);
    CHECK_EQ_U(rifl_credit_get_stats(a)->fcp_rx_bad_fccl, want.fcp_rx_bad_fccl);
    CHECK_EQ_U(rifl_credit_tx_regs(a, 0)->fctbs, 0);
    CHECK_EQ_U(rifl_credit_tx_regs(a, 0)->cl, 100);
    rifl_credit_free(a);
    rifl_credit_free(b);
}

/* An engine that starts again while packets it took are still unread
 * advertises only the space that is free, and their release later gives
 * the rest back. */
static void t_reinit_keeps_held(void)
{
    rifl_credit *a = mk(1, 8192), *b = mk(1, 8192);
    REQUIRE(a && b);
    uint64_t now = activate(a, b);
    /* B's reader stops: A fills B's buffer (8 packets of 1 KiB) */
    for (int i = 0; i < 8; i++)
        REQUIRE(rifl_credit_enqueue(a, 0, 1024, (uint64_t)i) == RIFL_OK);
    for (int k = 0; k < 100; k++, now += 10) {
        hop(a, b, now);
        hop(b, a, now);
    }
    const rifl_fc_rx *rx = rifl_credit_rx_regs(b, 0);
    REQUIRE(rx != NULL);
    CHECK_EQ_U(rifl_credit_get_stats(b)->vl[0].rx_packets, 8);
    CHECK_EQ_U(rx->free_chunks, 0);
    rifl_credit_set_state(b, RIFL_FC_LINK_INIT);
    CHECK_EQ_U(rx->free_chunks, 0);  /* the 8 packets still fill it */
    CHECK_EQ_U(rifl_fc_rx_fccl(rx), 0);
    for (int i = 0; i < 8; i++)
        CHECK_EQ_I(rifl_credit_rx_release(b, 0, 1024, now), RIFL_OK);
    CHECK_EQ_U(rx->free_chunks, rx->capacity);
    CHECK_EQ_I(rifl_credit_rx_release(b, 0, 1024, now), RIFL_ERR_INVALID_ARG);
    rifl_credit_free(a);
    rifl_credit_free(b);
}

/* A caller whose time goes back, or runs near the end of 64 bits, gets no
 * flood of FCPs: no time counts as passed, and the next one is due at the
 * last slot there is. */
static void t_time_edges(void)
{
    rifl_credit *a = mk(1, 8192);
    REQUIRE(a);
    rifl_credit_item it;
    REQUIRE(rifl_credit_poll(a, 5000, &it) == RIFL_OK);
    CHECK_EQ_U(it.kind, RIFL_CREDIT_ITEM_FCP);
    CHECK_EQ_I(rifl_credit_poll(a, 4000, &it), RIFL_ERR_AGAIN);
    CHECK_EQ_U(rifl_credit_get_stats(a)->fcp_tx, 1);
    CHECK_EQ_U(rifl_credit_next_due(a, 4000), 5000 + 1000);
    rifl_credit_free(a);
    a = mk(1, 8192);
    REQUIRE(a);
    REQUIRE(rifl_credit_poll(a, UINT64_MAX - 10, &it) == RIFL_OK);
    CHECK_EQ_U(rifl_credit_next_due(a, UINT64_MAX - 10), UINT64_MAX);
    CHECK_EQ_I(rifl_credit_poll(a, UINT64_MAX - 9, &it), RIFL_ERR_AGAIN);
    rifl_credit_free(a);
}

/* Every call on no engine is refused or answers nothing, without a crash. */
static void t_null_engine(void)
{
    uint8_t fcp[8] = { 0 };
    uint32_t head[RIFL_FC_NUM_VLS] = { 0 };
    CHECK_EQ_I(rifl_credit_rx_fcp(NULL, fcp, 8, 0), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_credit_rx_data(NULL, 0, 64), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_credit_rx_release(NULL, 0, 64, 0), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_U(rifl_credit_queued(NULL, 0), 0);
    CHECK(rifl_credit_get_stats(NULL) == NULL);
    CHECK(rifl_credit_get_config(NULL) == NULL);
    CHECK(rifl_credit_arbiter(NULL) == NULL);
    CHECK(rifl_credit_tx_regs(NULL, 0) == NULL);
    CHECK(rifl_credit_rx_regs(NULL, 0) == NULL);
    CHECK_EQ_U(rifl_credit_state(NULL), RIFL_FC_LINK_INIT);
    CHECK_EQ_U(rifl_credit_next_due(NULL, 5), UINT64_MAX);
    rifl_credit_set_state(NULL, RIFL_FC_LINK_ACTIVE);
    rifl_credit_rx_corrupt(NULL);
    CHECK_EQ_I(rifl_vlarb_pick(NULL, head, 1), -1);
    rifl_credit *a = mk(1, 8192);
    REQUIRE(a);
    CHECK_EQ_I(rifl_credit_rx_fcp(a, NULL, 8, 0), RIFL_ERR_INVALID_ARG);
    rifl_credit_free(a);
}

/* Without resynchronisation a corrupted data packet would leak its credit
 * for good: check that the leak really happens before FCTBS arrives and is
 * gone after. */
static void t_resync_recovers(void)
{
    rifl_credit *a = mk(1, 8192), *b = mk(1, 8192);
    REQUIRE(a && b);
    uint64_t now = activate(a, b);
    uint32_t full = rifl_fc_tx_credit(rifl_credit_tx_regs(a, 0));
    CHECK_EQ_U(full, 128);
    /* one packet of 10 blocks is lost on the wire */
    rifl_credit_enqueue(a, 0, 640, 1);
    rifl_credit_item it;
    int got = 0;
    while (rifl_credit_poll(a, now, &it) == RIFL_OK)
        got |= it.kind == RIFL_CREDIT_ITEM_DATA; /* dropped, never delivered */
    CHECK(got);
    rifl_credit_rx_corrupt(b);
    CHECK_EQ_U(rifl_credit_get_stats(b)->rx_corrupt, 1);
    /* B's FCPs alone keep the sender 10 blocks short */
    for (int i = 0; i < 3; i++) {
        now += 1000;
        while (rifl_credit_poll(b, now, &it) == RIFL_OK)
            rifl_credit_rx_fcp(a, it.fcp, 8, now);
    }
    CHECK_EQ_U(rifl_fc_tx_credit(rifl_credit_tx_regs(a, 0)), 118);
    /* A's periodic FCP carries FCTBS; B resyncs ABR; B's next FCCL is whole */
    now += 1000;
    while (rifl_credit_poll(a, now, &it) == RIFL_OK)
        rifl_credit_rx_fcp(b, it.fcp, 8, now);
    CHECK_EQ_U(rifl_credit_get_stats(b)->abr_resyncs, 1);
    CHECK_EQ_U(rifl_credit_get_stats(b)->abr_resync_blocks, 10);
    now += 1000;
    while (rifl_credit_poll(b, now, &it) == RIFL_OK)
        rifl_credit_rx_fcp(a, it.fcp, 8, now);
    CHECK_EQ_U(rifl_fc_tx_credit(rifl_credit_tx_regs(a, 0)), 128);
    rifl_credit_free(a);
    rifl_credit_free(b);
}

static void t_arbitration_shares(void)
{
    rifl_csim_config c;
    rifl_csim_default_config(&c);
    c.seed = test_seed;
    c.vls = 3;
    c.duration = 3000000;
    c.buffer_bytes = 64 * 1024;
    c.one_way = 500;
    char msg[256];
    CHECK_EQ_I(rifl_vlarb_parse_table("0:64,1:32,2:16", c.arb.low, &c.arb.n_low, msg,
                                      sizeof msg), RIFL_OK);
    c.arb.high_limit = 255;
    rifl_csim_result r;
    check_run(&c, &r);
    double tot = (double)r.total_delivered;
    double want[3] = { 4.0 / 7, 2.0 / 7, 1.0 / 7 };
    for (int v = 0; v < 3; v++) {
        double share = (double)r.vl[v].delivered_bytes / tot;
        CHECK_MSG(share > want[v] * 0.95 && share < want[v] * 1.05, "VL%d share %f", v, share);
    }
    CHECK(r.total_throughput > 0.97);
    /* a VL without credit (consumer stopped) gives its share to the others */
    c.drain[2] = 0;
    check_run(&c, &r);
    tot = (double)r.total_delivered;
    CHECK((double)r.vl[0].delivered_bytes / tot > 0.64);
    CHECK(r.vl[2].delivered_bytes <= c.buffer_bytes);
    CHECK(r.total_throughput > 0.95);
    /* high priority first, limited by the limit */
    rifl_csim_default_config(&c);
    c.seed = test_seed + 1;
    c.vls = 2;
    c.duration = 2000000;
    c.buffer_bytes = 64 * 1024;
    c.min_len = c.max_len = 1024;
    memset(&c.arb, 0, sizeof c.arb);
    rifl_vlarb_parse_table("0:255", c.arb.high, &c.arb.n_high, msg, sizeof msg);
    rifl_vlarb_parse_table("1:16", c.arb.low, &c.arb.n_low, msg, sizeof msg);
    c.arb.high_limit = 1; /* 4 KiB of high, then one low packet */
    check_run(&c, &r);
    double hs = (double)r.vl[0].delivered_bytes / (double)r.total_delivered;
    CHECK_MSG(hs > 0.78 && hs < 0.82, "high share %f", hs);
}

/* Head-of-line blocking: one stalled consumer stops everything under
 * ON/OFF with a shared buffer, nothing else under per-VL credits. */
static void t_hol(void)
{
    rifl_csim_config c;
    rifl_csim_default_config(&c);
    c.seed = test_seed;
    c.vls = 2;
    c.duration = 2000000;
    c.one_way = 1000;
    c.buffer_bytes = 16384;
    c.load[0] = c.load[1] = 0.45;
    c.hol_vl = 1;
    c.hol_start = 500000;
    c.hol_end = 1500000;
    rifl_csim_result r;
    check_run(&c, &r);
    double vl0 = (double)r.vl[0].hol_bytes / 1e6;
    CHECK_MSG(vl0 > 0.3, "credit: VL0 got %f during the stall", vl0);
    CHECK_EQ_U(r.rx_overflow, 0);
    c.mode = RIFL_CSIM_ONOFF;
    c.buffer_bytes = 32768;
    check_run(&c, &r);
    vl0 = (double)r.vl[0].hol_bytes / 1e6;
    CHECK_MSG(vl0 < 0.05, "on/off: VL0 got %f during the stall", vl0);
}

/* ON/OFF drops when its buffer is below what the round trip needs; credit
 * never does, whatever the buffer. */
static void t_onoff_vs_credit_small_buffer(void)
{
    rifl_csim_config c;
    rifl_csim_default_config(&c);
    c.seed = test_seed;
    c.vls = 1;
    c.duration = 2000000;
    c.one_way = 4000;
    c.buffer_bytes = 8192; /* one RTT is 8000 bytes */
    c.stall_on = 80000;
    c.stall_off = 40000;
    c.stall_fixed = true;
    rifl_csim_result r;
    c.mode = RIFL_CSIM_ONOFF;
    check_run(&c, &r);
    CHECK(r.rx_overflow > 0);
    c.mode = RIFL_CSIM_CREDIT;
    check_run(&c, &r);
    CHECK_EQ_U(r.rx_overflow, 0);
    CHECK(r.converged);
    /* and with 2 RTT of buffer (1 RTT + two largest packets would do) the
     * credit link runs at full speed */
    c.buffer_bytes = 16384;
    check_run(&c, &r);
    CHECK_MSG(r.efficiency > 0.98, "efficiency %f", r.efficiency);
}

/* On two RIFL lanes: credits in FC_NONE mode, with bit errors (replays) and
 * one stalled consumer; every packet arrives intact and in order, the
 * credit state is consistent after the drain, and VL0 keeps moving while
 * VL1 is stalled.  The lanes' own ON/OFF control blocks VL0 instead. */
static void t_lanes(void)
{
    rifl_clane_config c;
    rifl_clane_default_config(&c);
    c.seed = test_seed;
    c.slots = test_long_run ? 2000000 : 150000;
    c.load[0] = c.load[1] = 0.45;
    c.ber = 2e-6;
    c.hol_vl = 1;
    c.hol_start = c.slots / 4;
    c.hol_end = c.slots * 3 / 4;
    c.min_len = 1;
    c.max_len = 1500;
    rifl_clane_result r;
    char msg[256] = "";
    int rc = rifl_clane_run(&c, &r, msg, sizeof msg);
    REQUIRE(rc == RIFL_OK);
    CHECK(r.lossless);
    CHECK(r.converged);
    CHECK_EQ_U(r.bad_packets, 0);
    CHECK_EQ_U(r.credit_drops, 0);
    CHECK_EQ_U(r.lane_rx_overflow, 0);
    CHECK(r.replays > 0);
    CHECK(r.fcp_sent > 0);
    CHECK(r.sent_packets[0] > 100 && r.sent_packets[1] > 100);
    double win = (double)(c.hol_end - c.hol_start) * 30;
    CHECK_MSG(r.hol_bytes[0] / win > 0.25, "VL0 during stall %f", r.hol_bytes[0] / win);
    CHECK(r.hol_bytes[1] <= c.max_len); /* at most the packet in service */
    c.credit = false;
    rc = rifl_clane_run(&c, &r, msg, sizeof msg);
    REQUIRE(rc == RIFL_OK);
    CHECK(r.lossless);
    CHECK_MSG(r.hol_bytes[0] / win < 0.05, "on/off VL0 during stall %f", r.hol_bytes[0] / win);
}

TEST_MAIN({"link_states", t_link_states},
          {"peer_reinit", t_peer_reinit},
          {"bad_reinit_dropped", t_bad_reinit_dropped},
          {"reinit_keeps_held", t_reinit_keeps_held},
          {"null_engine", t_null_engine},
          {"time_edges", t_time_edges},
          {"lanes", t_lanes},
          {"fcp_drops_counted", t_fcp_drops_counted},
          {"fcp_period", t_fcp_period},
          {"random_lossy", t_random_lossy},
          {"resync_recovers", t_resync_recovers},
          {"arbitration_shares", t_arbitration_shares},
          {"hol", t_hol},
          {"onoff_vs_credit_small_buffer", t_onoff_vs_credit_small_buffer})
