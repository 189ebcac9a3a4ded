/* The state files of running links (`rifl link up` writes one, `rifl link
 * status` and `rifl link down` read it): <state dir>/<name>.json, one JSON
 * object on one line, replaced whole (written beside, then renamed). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli.h"

int cli_link_state_dir(const char *given, char *out, size_t n)
{
    const char *rt = getenv("XDG_RUNTIME_DIR");
    if (given && *given)
        snprintf(out, n, "%s", given);
    else if (geteuid() == 0)
        snprintf(out, n, "/run/rifl");
    else if (rt && *rt)
        snprintf(out, n, "%s/rifl", rt);
    else
        snprintf(out, n, "/tmp/rifl-%u", (unsigned)geteuid());
    if (mkdir(out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "error: cannot create the state directory %s: %s; give another with "
                "--state-dir\n", out, strerror(errno));
        return 2;
    }
    return 0;
}

int cli_link_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 15)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
              (name[i] >= '0' && name[i] <= '9') || name[i] == '-' || name[i] == '_' ||
              name[i] == '.'))
            return 0;
    return name[0] != '.';
}

void cli_link_state_path(const char *dir, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s.json", dir, name);
}

int cli_link_state_write(const char *path, const char *json)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    int bad = fputs(json, f) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* The pid in a state file's text ("pid": N), 0 when there is none. */
long cli_link_state_pid(const char *json)
{
    const char *p = json ? strstr(json, "\"pid\": ") : NULL;
    return p ? strtol(p + 7, NULL, 10) : 0;
}

int cli_link_alive(long pid)
{
    return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}
