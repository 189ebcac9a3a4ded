/* Every engine's counter table (rifl/counter.h) names each counter of its
 * statistics structure exactly once, in lower case, with a meaning; and the
 * value read through the table is the field's. */
#include "testlib.h"

#include "rifl/rifl.h"

static void check_table(const char *what, const rifl_counter *c, size_t n, size_t stats_size)
{
    size_t fields = stats_size / sizeof(uint64_t);
    CHECK_MSG(n == fields, "%s: %zu entries for %zu counters", what, n, fields);
    bool seen[512] = { false };
    REQUIRE(fields <= 512);
    unsigned bad = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = c[i].offset / sizeof(uint64_t);
        if (c[i].offset % sizeof(uint64_t) || k >= fields || seen[k]) {
            printf("  %s: %s is at a wrong or repeated offset\n", what, c[i].name);
            bad++;
        } else {
            seen[k] = true;
        }
        if (!c[i].name[0] ||
            strspn(c[i].name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(c[i].name) ||
            !c[i].meaning || !c[i].meaning[0]) {
            printf("  %s: entry %zu has a bad name or no meaning\n", what, i);
            bad++;
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp(c[i].name, c[j].name)) {
                printf("  %s: %s twice\n", what, c[i].name);
                bad++;
            }
    }
    CHECK_EQ_U(bad, 0);
}

/* a structure whose every counter holds its own index: the table must read
 * back each one at its place */
static void check_values(const rifl_counter *c, size_t n, size_t stats_size)
{
    uint64_t buf[512];
    REQUIRE(stats_size <= sizeof buf);
    for (size_t i = 0; i < stats_size / sizeof(uint64_t); i++)
        buf[i] = 1000 + i;
    unsigned wrong = 0;
    for (size_t i = 0; i < n; i++)
        if (rifl_counter_value(&c[i], buf) != 1000 + c[i].offset / sizeof(uint64_t))
            wrong++;
    CHECK_EQ_U(wrong, 0);
}

static void t_tables(void)
{
    size_t n;
    const rifl_counter *c = rifl_lane_counters(&n);
    check_table("lane", c, n, sizeof(rifl_lane_stats));
    check_values(c, n, sizeof(rifl_lane_stats));
    c = rifl_phy_counters(&n);
    check_table("phy", c, n, sizeof(rifl_phy_stats));
    check_values(c, n, sizeof(rifl_phy_stats));
    c = rifl_port_counters(&n);
    check_table("port", c, n, sizeof(rifl_port_stats));
    check_values(c, n, sizeof(rifl_port_stats));
    c = rifl_switch_counters(&n);
    check_table("switch", c, n, sizeof(rifl_switch_stats));
    check_values(c, n, sizeof(rifl_switch_stats));
    c = rifl_udplink_counters(&n);
    check_table("udplink", c, n, sizeof(rifl_udplink_stats));
    check_values(c, n, sizeof(rifl_udplink_stats));
    c = rifl_nic_counters(&n);
    check_table("nic", c, n, sizeof(rifl_nic_stats));
    check_values(c, n, sizeof(rifl_nic_stats));
    CHECK(rifl_lane_counters(NULL) != NULL);
}

/* the tables against real engines: a lane's slots, a switch's steps */
static void t_live_values(void)
{
    rifl_lane *l;
    REQUIRE(rifl_lane_create(&rifl_lane_default_config, &l, NULL, 0) == RIFL_OK);
    uint8_t w[32];
    for (uint64_t t = 0; t < 9; t++)
        rifl_lane_tx(l, t, w);
    size_t n;
    const rifl_counter *c = rifl_lane_counters(&n);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(c[i].name, "tx_slots"))
            CHECK_EQ_U(rifl_counter_value(&c[i], rifl_lane_get_stats(l)), 9);
        if (!strcmp(c[i].name, "tx_state_init"))
            CHECK_EQ_U(rifl_counter_value(&c[i], rifl_lane_get_stats(l)),
                       rifl_lane_get_stats(l)->tx_state_slots[RIFL_TX_INIT]);
    }
    rifl_lane_free(l);
    rifl_switch *sw;
    REQUIRE(rifl_switch_create(&rifl_switch_default_config, &sw, NULL, 0) == RIFL_OK);
    unsigned np = rifl_switch_get_config(sw)->nports;
    rifl_cell out[256];
    uint8_t ov[256];
    REQUIRE(np <= 256);
    for (uint64_t t = 0; t < 5; t++)
        CHECK_EQ_I(rifl_switch_step(sw, t, out, ov, NULL, NULL), 0);
    CHECK_EQ_I(rifl_switch_step(sw, 4, out, ov, NULL, NULL), RIFL_ERR_STATE);
    rifl_switch_stats st;
    rifl_switch_get_stats(sw, &st);
    c = rifl_switch_counters(&n);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(c[i].name, "slots"))
            CHECK_EQ_U(rifl_counter_value(&c[i], &st), 5);
        if (!strcmp(c[i].name, "slot_errors"))
            CHECK_EQ_U(rifl_counter_value(&c[i], &st), 1);
    }
    rifl_switch_free(sw);
}

TEST_MAIN({ "tables", t_tables }, { "live_values", t_live_values })
