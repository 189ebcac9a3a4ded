/* The state files of running links (`rifl link up` writes one, `rifl link
 * status` and `rifl link down` read it): <state dir>/<name>.json, one JSON
 * object on one line, replaced whole (written beside, then renamed). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
    int len;
    if (given && *given)
        len = snprintf(out, n, "%s", given);
    else if (geteuid() == 0)
        len = snprintf(out, n, "/run/rifl");
    else if (rt && *rt)
        len = snprintf(out, n, "%s/rifl", rt);
    else
        len = snprintf(out, n, "/tmp/rifl-%u", (unsigned)geteuid());
    /* (room is left for "/NAME.json" and the temporary beside it) */
    if (len < 0 || (size_t)len + 64 >= n) {
        fprintf(stderr, "error: the state directory path is %d characters long, more than %zu; "
                "give a shorter one with --state-dir%s\n", len, n - 64,
                given && *given ? "" : " (or a shorter XDG_RUNTIME_DIR)");
        return 2;
    }
    if (mkdir(out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "error: cannot create the state directory %s: %s; give another with "
                "--state-dir\n", out, strerror(errno));
        return 2;
    }
    /* its files name processes to signal: only this user may write there */
    struct stat st;
    const char *why = lstat(out, &st) != 0 ? strerror(errno)
                      : !S_ISDIR(st.st_mode) ? "not a directory"
                      : st.st_uid != geteuid() ? "another user owns it"
                      : st.st_mode & 022 ? "others may write to it"
                      : NULL;
    if (why) {
        fprintf(stderr, "error: the state directory %s is not a directory of this user's that "
                "only it can write (%s); remove it or give another with --state-dir\n", out,
                why);
        return 2;
    }
    return 0;
}

unsigned cli_link_each(const char *dir, void (*fn)(void *ctx, const char *name, const char *path),
                       void *ctx)
{
    DIR *d = opendir(dir);
    unsigned found = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 6 || len > 255 || strcmp(e->d_name + len - 5, ".json") || e->d_name[0] == '.')
            continue;
        char name[256], path[4096];
        snprintf(name, sizeof name, "%.*s", (int)(len - 5), e->d_name);
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        found++;
        if (fn)
            fn(ctx, name, path);
    }
    if (d)
        closedir(d);
    return found;
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
    /* (never through a link someone left in its place) */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int bad = fputs(json, f) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* The pid in a state file's text ("pid": N), 0 when there is none or it
 * is no process ID (a pid_t is an int; 0 and below name groups of
 * processes to kill()). */
long cli_link_state_pid(const char *json)
{
    const char *p = json ? strstr(json, "\"pid\": ") : NULL;
    if (!p || p[7] < '1' || p[7] > '9')
        return 0;
    errno = 0;
    char *end;
    long pid = strtol(p + 7, &end, 10);
    if (errno || pid <= 0 || pid > INT_MAX || (*end != ',' && *end != '}'))
        return 0;
    return pid;
}

/* Process pid runs `rifl link up` (its command line holds "link" "up" in
 * a row): a state file a crash left behind may name a process ID that
 * another program has since.  Where /proc cannot say, any live process. */
static int is_link_up(long pid)
{
    char path[64], cmd[4096];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno != ENOENT;
    ssize_t n = read(fd, cmd, sizeof cmd - 1);
    close(fd);
    if (n <= 0)
        return 0; /* (a zombie, or a kernel thread) */
    cmd[n] = 0;
    for (ssize_t i = 0; i + 8 <= n; i++)
        if ((i == 0 || cmd[i - 1] == 0) && memcmp(cmd + i, "link\0up\0", 8) == 0)
            return 1;
    return 0;
}

int cli_link_alive(long pid)
{
    return pid > 0 && pid <= INT_MAX && (kill((pid_t)pid, 0) == 0 || errno == EPERM) &&
           is_link_up(pid);
}
