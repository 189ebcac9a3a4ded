/* `rifl link down`: stop a link `rifl link up` runs (SIGTERM to the process
 * in its state file), and wait until it has stopped. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

struct names {
    char first[256];
    char all[512];
};

static void add_name(void *ctx, const char *name, const char *path)
{
    (void)path;
    struct names *n = ctx;
    size_t used = strlen(n->all);
    if (!used)
        snprintf(n->first, sizeof n->first, "%s", name);
    snprintf(n->all + used, sizeof n->all - used, "%s%s", used ? ", " : "", name);
}

/* Without --name: the one link whose state is in `dir` (its name into
 * `out`); 0, or 1 with a message when there is none or more than one. */
static int only_link(const char *dir, char *out, size_t n)
{
    struct names names = { "", "" };
    unsigned found = cli_link_each(dir, add_name, &names);
    snprintf(out, n, "%s", names.first);
    if (found == 1)
        return 0;
    if (!found)
        fprintf(stderr, "error: no link is up (state directory %s)\n", dir);
    else
        fprintf(stderr, "error: %u links are up (%s): name the one to stop with --name\n",
                found, names.all);
    return 1;
}

static int run(int argc, char **argv)
{
    const char *name = NULL, *state_dir = NULL;
    uint64_t wait_s = 10;
    struct cli_opt opts[] = {
        { "name", CLI_STRING, &name, "the link to stop (default: the only one up)", 0, 0 },
        { "state-dir", CLI_STRING, &state_dir, "where rifl link up keeps its state files", 0, 0 },
        { "wait-s", CLI_UINT, &wait_s, "seconds to wait for it to stop", 1, 3600 },
        CLI_END,
    };
    int rc = cli_parse(argc, argv, opts, "[--name NAME]",
                       "Stops the link rifl link up runs under --name (without it: the only link\n"
                       "up): its TAP device goes with it.", NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (name && !cli_link_name_ok(name))
        return cli_fail(opts, "name", "'%s' cannot name a link: use 1 to 15 letters, digits, "
                        "'-', '_' or '.'", name);
    char dir[2048], path[4096], text[4096] = "";
    if (cli_link_state_dir(state_dir, dir, sizeof dir))
        return 2;
    char only[256];
    if (!name) {
        if (only_link(dir, only, sizeof only))
            return 1;
        name = only;
    }
    cli_link_state_path(dir, name, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "error: no link named '%s' is up (no %s)\n", name, path);
        return 1;
    }
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    long pid = cli_link_state_pid(text);
    if (!cli_link_alive(pid)) {
        unlink(path);
        fprintf(stderr, "rifl link down: %s was not running; its stale state is removed\n", name);
        return 0;
    }
    if (kill((pid_t)pid, SIGTERM) != 0) {
        fprintf(stderr, "error: cannot stop process %ld: %s\n", pid, strerror(errno));
        return 2;
    }
    for (uint64_t i = 0; i < wait_s * 100; i++) {
        if (access(path, F_OK) != 0 && !cli_link_alive(pid)) {
            fprintf(stderr, "rifl link down: %s stopped\n", name);
            return 0;
        }
        struct timespec ts = { 0, 10000000 };
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "error: %s (process %ld) did not stop within %llu s\n", name, pid,
            (unsigned long long)wait_s);
    return 2;
}

const struct rifl_command rifl_cmd_link_down = {
    "link down", "stop a link rifl link up runs", run
};
