/* gnuplot for the rifl CLI: a figure takes its name only once gnuplot has
 * made it.  gnuplot writes to a temporary file beside the PNG, started
 * without a shell, and the file is renamed when gnuplot succeeds; a failure
 * leaves an earlier figure of that name as it was. */
#include "cli.h"

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* 'PREFIX S' as a gnuplot string ('' stands for ') */
static void gp_quote_prefixed(FILE *f, const char *prefix, const char *s)
{
    fputc('\'', f);
    fputs(prefix, f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('\'', f);
}

void cli_gp_quote(FILE *f, const char *s)
{
    gp_quote_prefixed(f, "", s);
}

/* gnuplot gives file names starting with '<' (a command to run), '|' (an
 * output pipe), '-', '+' or '++' (special files) a meaning of their own; a
 * relative name written as ./NAME always names the file. */
static const char *gp_path_prefix(const char *path)
{
    return path[0] == '/' ? "" : "./";
}

void cli_gp_quote_path(FILE *f, const char *s)
{
    gp_quote_prefixed(f, gp_path_prefix(s), s);
}

/* a temporary file beside `path`, with the mode a new file would get */
static int temp_beside(const char *path, const char *suffix, char *tmp, size_t n)
{
    if ((size_t)snprintf(tmp, n, "%s%s.XXXXXX", path, suffix) >= n)
        return -1;
    int fd = mkstemp(tmp);
    if (fd < 0)
        return -1;
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    close(fd);
    return 0;
}

/* gnuplot -e "rifl_out='TMP'" SCRIPT, without a shell: its exit status
 * (127: not found) */
static int spawn_gnuplot(const char *script, const char *out)
{
    size_t n = 18 + 2 * strlen(out);
    char *set = malloc(n);
    if (!set)
        return -1;
    size_t k = (size_t)snprintf(set, n, "rifl_out='%s", gp_path_prefix(out));
    for (const char *s = out; *s; s++) {
        if (*s == '\'')
            set[k++] = '\'';
        set[k++] = *s;
    }
    snprintf(set + k, n - k, "'");
    char *args[] = { (char *)"gnuplot", (char *)"-e", set, (char *)script, NULL };
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, args, environ);
    free(set);
    if (rc)
        return 127;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int cli_gnuplot(const char *png, const char *where, const char *keep_script,
                void (*body)(FILE *f, void *ctx), void *ctx)
{
    char tmp[4200], script[4200];
    if (temp_beside(png, "", tmp, sizeof tmp)) {
        fprintf(stderr, "error: %s: cannot write beside '%s': %s\n", where, png, strerror(errno));
        return 2;
    }
    int status = 0;
    if (keep_script)
        snprintf(script, sizeof script, "%s", keep_script);
    else if (temp_beside(png, ".gp", script, sizeof script)) {
        fprintf(stderr, "error: %s: cannot write beside '%s': %s\n", where, png, strerror(errno));
        status = 2;
        script[0] = '\0';
    }
    FILE *f = status ? NULL : fopen(script, "w");
    if (!status && !f) {
        fprintf(stderr, "error: %s: cannot write '%s': %s\n", where, script, strerror(errno));
        status = 2;
    }
    if (f) {
        /* run alone, the script writes the figure itself; rifl points it at
         * the temporary file */
        fprintf(f, "set terminal pngcairo size 900,600 enhanced font 'Sans,11'\n"
                   "if (!exists(\"rifl_out\")) rifl_out = ");
        cli_gp_quote_path(f, png);
        fprintf(f, "\nset output rifl_out\n");
        body(f, ctx);
        fprintf(f, "unset output\n");
        if (ferror(f) | fclose(f)) {
            fprintf(stderr, "error: %s: cannot write '%s'\n", where, script);
            status = 2;
        }
    }
    if (!status) {
        int code = spawn_gnuplot(script, tmp);
        struct stat sb;
        if (code == 127) {
            fprintf(stderr, "error: cannot run gnuplot; install it (scripts/install-deps.sh "
                    "does); nothing written to %s\n", png);
            status = 2;
        } else if (code != 0) {
            fprintf(stderr, "error: gnuplot failed (exit status %d); nothing written to %s\n",
                    code, png);
            status = 2;
        } else if (stat(tmp, &sb) || sb.st_size == 0) {
            fprintf(stderr, "error: gnuplot wrote no figure; nothing written to %s\n", png);
            status = 2;
        } else if (rename(tmp, png)) {
            fprintf(stderr, "error: %s: cannot write '%s': %s\n", where, png, strerror(errno));
            status = 2;
        }
    }
    if (status)
        remove(tmp);
    if (!keep_script && script[0])
        remove(script);
    return status;
}
