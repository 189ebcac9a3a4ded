/* `rifl link status`: the counters of the links `rifl link up` runs, read
 * from their state files (docs/link-daemon.md). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A number field of a state file's text, or -1. */
static double field(const char *j, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\": ", key);
    const char *p = strstr(j, k);
    return p ? strtod(p + strlen(k), NULL) : -1;
}

static void text_field(const char *j, const char *key, char *out, size_t n)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\": \"", key);
    const char *p = strstr(j, k);
    out[0] = 0;
    if (!p)
        return;
    p += strlen(k);
    size_t len = strcspn(p, "\"");
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), p);
}

static void show(const char *j, bool json, bool alive)
{
    if (json) {
        /* the state file's object, with whether its process still runs */
        size_t n = strlen(j);
        while (n && (j[n - 1] == '\n' || j[n - 1] == '}'))
            n--;
        printf("%.*s, \"running\": %s}\n", (int)n, j, alive ? "true" : "false");
        return;
    }
    char name[64], state[32], local[128], remote[128], tap[32];
    text_field(j, "name", name, sizeof name);
    text_field(j, "state", state, sizeof state);
    text_field(j, "local", local, sizeof local);
    text_field(j, "remote", remote, sizeof remote);
    text_field(j, "tap", tap, sizeof tap);
    printf("%s: %s%s, %s -> %s%s%s, up %.0f s\n", name, alive ? state : "not running (stale "
           "state)", "", local, remote, tap[0] ? ", TAP " : "", tap, field(j, "uptime_s"));
    printf("  round trip %.1f us, K=%.0f, lane rate %g Gbit/s; now tx %.3f rx %.3f Gbit/s\n",
           field(j, "rtt_us"), field(j, "fid_bits"), field(j, "rate_gbps"), field(j, "tx_gbps"),
           field(j, "rx_gbps"));
    printf("  packets sent %.0f (%.0f bytes), received %.0f (%.0f bytes)\n",
           field(j, "tx_packets"), field(j, "tx_bytes"), field(j, "rx_packets"),
           field(j, "rx_bytes"));
    printf("  replays %.0f (%.0f frames), verify failures %.0f, frames missing %.0f "
           "(erasures %.0f), datagrams late %.0f, foreign %.0f, malformed %.0f, other width "
           "%.0f\n", field(j, "replays"), field(j, "replayed_frames"), field(j, "verify_failures"),
           field(j, "frames_missing"), field(j, "erasures"), field(j, "datagrams_late"),
           field(j, "datagrams_foreign"), field(j, "datagrams_malformed"),
           field(j, "datagrams_other_width"));
    printf("  receive queue overflows %.0f frames; datagrams dropped by --loss %.0f; TAP frames "
           "too long for the lane %.0f\n", field(j, "frames_overflow"),
           field(j, "datagrams_dropped"), field(j, "tap_in_dropped"));
    printf("  joint resets %.0f (peer restarts; %.0f frames to send and %.0f unread dropped), "
           "stale datagrams %.0f; jumps ahead held %.0f, taken %.0f\n", field(j, "resets"),
           field(j, "reset_tx_frames"), field(j, "reset_rx_frames"), field(j, "datagrams_stale"),
           field(j, "datagrams_far_held"), field(j, "jumps"));
}

static char *read_state(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 8192);
    if (buf)
        buf[fread(buf, 1, 8191, f)] = 0;
    fclose(f);
    return buf;
}

struct shown {
    bool json;
    int n;
};

static void show_file(void *ctx, const char *name, const char *path)
{
    (void)name;
    struct shown *s = ctx;
    char *j = read_state(path);
    if (j) {
        show(j, s->json, cli_link_alive(cli_link_state_pid(j)));
        s->n++;
        free(j);
    }
}

static int run(int argc, char **argv)
{
    const char *name = NULL, *state_dir = NULL;
    bool json = false;
    struct cli_opt opts[] = {
        { "name", CLI_STRING, &name, "the link to show (default: every link)", 0, 0 },
        { "state-dir", CLI_STRING, &state_dir, "where rifl link up keeps its state files", 0, 0 },
        { "json", CLI_FLAG, &json, "one JSON object per link", 0, 0 },
        CLI_END,
    };
    int rc = cli_parse(argc, argv, opts, "[--name NAME] [--json]",
                       "Shows the counters of the links rifl link up runs: state, round trip,\n"
                       "throughput, replays, verification failures, dropped datagrams.",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (name && !cli_link_name_ok(name))
        return cli_fail(opts, "name", "'%s' cannot name a link: use 1 to 15 letters, digits, "
                        "'-', '_' or '.'", name);
    char dir[2048], path[4096];
    if (cli_link_state_dir(state_dir, dir, sizeof dir))
        return 2;
    if (name) {
        cli_link_state_path(dir, name, path, sizeof path);
        char *j = read_state(path);
        if (!j) {
            fprintf(stderr, "error: no link named '%s' is up (no %s); start one with rifl link "
                    "up\n", name, path);
            return 1;
        }
        show(j, json, cli_link_alive(cli_link_state_pid(j)));
        free(j);
        return 0;
    }
    struct shown s = { json, 0 };
    cli_link_each(dir, show_file, &s);
    if (!s.n && !json)
        printf("no links are up (state directory %s)\n", dir);
    return 0;
}

const struct rifl_command rifl_cmd_link_status = {
    "link status", "counters of the links rifl link up runs", run
};
