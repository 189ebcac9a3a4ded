/* Shared plumbing for the `rifl` subcommands: option tables, config files,
 * JSON/CSV output helpers and progress lines. */
#ifndef RIFL_CLI_H
#define RIFL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rifl_command {
    const char *name;    /* "decode", "sim link", "bench codec" */
    const char *summary; /* one line for `rifl --help` */
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
};

/* Option kinds */
enum cli_type {
    CLI_FLAG,    /* bool, no value */
    CLI_BOOL,    /* bool with value true/false/1/0/yes/no/on/off */
    CLI_UINT,    /* uint64_t, accepts 1e9, 10k, 10M, 10G (x1000), 4Ki, 1Mi, 1Gi */
    CLI_INT,     /* int64_t */
    CLI_DOUBLE,  /* double */
    CLI_STRING,  /* const char * (points into argv or a kept copy) */
    CLI_BYTES    /* uint64_t bytes: 10GB, 1MB (x1000), 4KiB, 1MiB, or plain */
};

struct cli_opt {
    const char *name;     /* long name without dashes, also the config key */
    enum cli_type type;
    void *ptr;
    const char *help;
    double min, max;      /* numeric range check when min < max */
};

#define CLI_END { 0, CLI_FLAG, 0, 0, 0, 0 }

/* Parse argv: `--name value`, `--name=value`, flags, and `--config FILE`
 * (settings read first, command line wins).  `--help`/-h prints the usage
 * and returns 1.  Positional arguments are stored in pos[] (at most npos;
 * *npos_out gets the count).  Returns 0 on success, 1 after --help,
 * 2 on error (message already printed). */
int cli_parse(int argc, char **argv, const struct cli_opt *opts,
              const char *usage_line, const char *description,
              char **pos, int npos, int *npos_out);

void cli_usage(FILE *f, const char *cmd, const struct cli_opt *opts,
               const char *usage_line, const char *description);

/* Set one option by name from a string value (used by config files and
 * sweeps).  Returns 0 or prints an error and returns 2. */
int cli_set(const struct cli_opt *opts, const char *name, const char *value,
            const char *where);

/* Number parsers with suffixes; return 0 on success. */
int cli_parse_u64(const char *s, uint64_t *out);
int cli_parse_bytes(const char *s, uint64_t *out);
int cli_parse_double(const char *s, double *out);

/* Read a whole file into a malloc'ed buffer (NUL-terminated).  "-" means
 * stdin.  Returns NULL and prints a message on failure. */
char *cli_read_file(const char *path, size_t *len);

/* JSON helpers: write a string value with escapes. */
void json_str(FILE *f, const char *s);

/* Progress line on stderr, at most every 0.5 s, only when stderr is a
 * terminal or `force` is set.  Call cli_progress_done() at the end. */
void cli_progress(const char *what, double fraction, const char *extra, bool force);
void cli_progress_done(bool force);

/* Wall clock in seconds (monotonic) for reporting run times. */
double cli_now(void);

#endif
