/* Shared plumbing for the `rifl` subcommands: option tables, config files,
 * JSON/CSV output helpers and progress lines. */
#ifndef RIFL_CLI_H
#define RIFL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rifl/phy.h"

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
 * sweeps).  `where` says where the value comes from: "option --x" (the
 * command line), "FILE:LINE" (a config file) or "option --sweep (...)".
 * The value is checked against the option's type and range.  Returns 0 or
 * prints an error naming `where` and returns 2. */
int cli_set(const struct cli_opt *opts, const char *name, const char *value,
            const char *where);

/* The option called `name` (config files may write '_' for '-'), or NULL. */
const struct cli_opt *cli_find(const struct cli_opt *opts, const char *name);

/* The same checks as cli_set without storing the value. */
int cli_check(const struct cli_opt *opts, const char *name, const char *value,
              const char *where);

/* Where option `name` got its value, for messages about it: "option --x"
 * (command line, or the default), "FILE:LINE: x" (config file) or
 * "option --sweep (point 3: x=...)".  The text stays valid until eight
 * more calls have been made. */
const char *cli_where(const struct cli_opt *opts, const char *name);

/* Whether the user set option `name` (command line, config file or sweep). */
bool cli_is_set(const struct cli_opt *opts, const char *name);

/* Print "error: WHERE: message" and return 2, WHERE naming each option of
 * the comma-separated list `names` with cli_where (" and " between them). */
int cli_fail(const struct cli_opt *opts, const char *names, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Refuse option `name` when the user set it but it has no effect: prints
 * "error: WHERE: --name has no effect REASON" and returns 2; 0 when the
 * option was not set. */
int cli_unused(const struct cli_opt *opts, const char *name, const char *reason);

/* A configuration check refused the settings with `msg`.  Find which of the
 * options the user set are involved: each one in turn goes back to its
 * default and `check` (0 = accepted) runs again; the options whose default
 * makes the check pass are named.  Prints "error: WHERE: msg" (or just
 * "error: msg" when none can be singled out) and returns 2. */
int cli_blame(const struct cli_opt *opts, int (*check)(void *ctx), void *ctx,
              const char *msg);

/* 0 when `bits` is a RIFL frame width; otherwise a message naming option
 * `name` and the supported widths, and 2. */
int cli_frame_width(const struct cli_opt *opts, const char *name, uint64_t bits);

/* Check that `path` can be written as an output file before a long run:
 * refuses a directory, a name ending in '/' and a path that cannot be
 * created, naming `what` (e.g. "option --csv").  A file that did not exist
 * is not left behind.  Returns 0 or prints an error and returns 2. */
int cli_check_output(const char *path, const char *what);

/* Number parsers with suffixes; return 0 on success.  Plain digit strings
 * are converted exactly (seeds above 2^53 keep every digit). */
int cli_parse_u64(const char *s, uint64_t *out);
int cli_parse_i64(const char *s, int64_t *out);
int cli_parse_bytes(const char *s, uint64_t *out);
int cli_parse_double(const char *s, double *out);

/* A comma-separated list of numbers for option `what` (e.g. "--loads"):
 * at most `max` values, each from lo to hi; no empty element.  Returns the
 * count, or prints an error naming the option and returns -1 (silently when
 * `what` is NULL). */
int cli_parse_list(const char *s, double *out, unsigned max, double lo, double hi,
                   const char *what);

/* Sweeps (tools/cli_sweep.c): `--sweep 'KEY=SPEC [KEY2=SPEC ...]'`, keys
 * separated by blanks or ';', each SPEC a list V1,V2,... or a range
 * FROM:TO:STEP with STEP D or +D (add) or xF, *F, xB^E (multiply).  Every
 * value of every point is checked against the swept option's type and
 * range when the sweep is parsed, before anything runs. */
#define CLI_SWEEP_MAX_KEYS 4
#define CLI_SWEEP_MAX_POINTS 10000
struct cli_sweep_key {
    const struct cli_opt *opt;  /* the swept option */
    unsigned n;                 /* its values */
    char **vals;
};
struct cli_sweep {
    unsigned nkeys;
    struct cli_sweep_key key[CLI_SWEEP_MAX_KEYS];
    size_t npoints;             /* product of the value counts */
};
/* `fixed`: NULL-terminated names that cannot be swept (with `why`, shown
 * in the message).  Returns 0 or prints an error naming --sweep and
 * returns 2 (nothing to free then). */
int cli_sweep_parse(struct cli_sweep *sw, const char *spec, const struct cli_opt *opts,
                    const char *const *fixed, const char *why);
/* Set the options to point i (0-based; the last key varies fastest). */
int cli_sweep_apply(const struct cli_sweep *sw, size_t i, const struct cli_opt *opts);
/* Whether s is a number as JSON writes it. */
bool cli_json_number(const char *s);
/* `value` as option `o` takes it, written back plainly into buf: a number
 * as a decimal (10KB as 10000, 0x10 as 16), anything else as given.  0, or
 * 2 for a value the option refuses (with its message). */
int cli_canonical(const struct cli_opt *o, const char *value, char *buf, size_t len);
/* The current value of a numeric option (NAN for other kinds). */
double cli_opt_number(const struct cli_opt *o);
/* Value of key k at point i. */
const char *cli_sweep_value(const struct cli_sweep *sw, size_t i, unsigned k);
/* Whether option `name` is one of the swept keys. */
bool cli_sweep_has(const struct cli_sweep *sw, const char *name);
void cli_sweep_free(struct cli_sweep *sw);

/* Read a whole file into a malloc'ed buffer (NUL-terminated).  "-" means
 * stdin.  Returns NULL and prints a message on failure. */
char *cli_read_file(const char *path, size_t *len);

/* Cut the next line off a text buffer read with cli_read_file: returns it
 * (NUL-terminated, a trailing CR removed) and moves *p past it; NULL at the
 * end of the text. */
char *cli_next_line(char **p);
/* The same with `what` (e.g. "option --topology") before the message. */
char *cli_read_named(const char *path, const char *what, size_t *len);
/* the largest file those read (a device such as /dev/zero is refused at
 * this size rather than read until memory runs out) */
#define CLI_READ_MAX (256 << 20)

/* gnuplot (tools/cli_gnuplot.c).  cli_gp_quote writes a single-quoted
 * gnuplot string; cli_gp_quote_path writes a file name so that gnuplot
 * reads it as that file (a relative name as ./NAME: never a command or a
 * special file such as '<cmd', '|cmd' or '-').  cli_gnuplot writes a script (the PNG terminal, the
 * output, then what `body` writes) and runs gnuplot on it without a shell;
 * the figure is made beside `png` and takes its name only when gnuplot
 * succeeds.  `keep_script` (may be NULL) is where the script stays, runnable
 * on its own; `where` names the option for messages.  Returns 0 or prints
 * an error and returns 2. */
void cli_gp_quote(FILE *f, const char *s);
void cli_gp_quote_path(FILE *f, const char *s);
int cli_gnuplot(const char *png, const char *where, const char *keep_script,
                void (*body)(FILE *f, void *ctx), void *ctx);

/* JSON helpers: write a string value with escapes; write an object of
 * every counter of a table (rifl/counter.h) with its value in `stats`. */
void json_str(FILE *f, const char *s);
struct rifl_counter;
void json_counters(FILE *f, const struct rifl_counter *ct, size_t n, const void *stats);

/* Progress line on stderr, at most every 0.5 s, only when stderr is a
 * terminal or `force` is set.  Call cli_progress_done() at the end. */
/* --topology: a generator (single:N, leafspine:LxSxH, fattree:K) or a
 * topology file, into *topo; 0, or 2 after printing an error naming where
 * the value came from (option `topology` of `table`). */
struct rifl_topology;
int cli_load_topology(const struct cli_opt *table, const char *path,
                      struct rifl_topology **topo);
/* The same for an option of another name. */
int cli_load_topology_as(const struct cli_opt *table, const char *option, const char *path,
                         struct rifl_topology **topo);
/* A warning on stderr when the routes over `t` (`paths` per host pair) can
 * deadlock under per-VOQ flow control (rifl_topo_wait_cycle), naming the
 * VOQs of a cycle; returns the cycle's length (0: none, or not found). */
unsigned cli_warn_wait_cycle(const struct cli_opt *table, const char *option,
                             const struct rifl_topology *t, unsigned paths);
/* --group-lanes given where no link is bonded (every link one lane: a
 * topology file's link its own lanes, the others `lanes`): said, and 2;
 * else 0. */
int cli_group_lanes_unused(const struct cli_opt *table, const struct rifl_topology *topo,
                           uint64_t lanes);
/* --NAME (lanes, cable-m, transceiver-ns or ber) given while
 * every link of the topology gives its own value of it: said, and 2; else
 * 0. */
int cli_topo_gives_unused(const struct cli_opt *table, const struct rifl_topology *topo,
                          const char *name);

void cli_progress(const char *what, double fraction, const char *extra, bool force);
void cli_progress_done(bool force);

/* A duration for people: "3.2 s", "4.5 min", "2.1 h", "3.0 days",
 * "1e+09 years", "forever". */
void cli_format_duration(char *buf, size_t n, double seconds);

/* State files of running links (cli_linkstate.c).  cli_link_state_dir:
 * --state-dir, or /run/rifl for root, $XDG_RUNTIME_DIR/rifl, /tmp/rifl-UID;
 * created when missing (0, or 2 after a message).  A link name is 1 to 15
 * letters, digits, '-', '_' or '.', not starting with '.'.  The state is
 * written whole (beside, then renamed); cli_link_state_pid reads its pid,
 * cli_link_alive says whether that process runs. */
int cli_link_state_dir(const char *given, char *out, size_t n);
int cli_link_name_ok(const char *name);
void cli_link_state_path(const char *dir, const char *name, char *out, size_t n);
int cli_link_state_write(const char *path, const char *json);
long cli_link_state_pid(const char *json);
int cli_link_alive(long pid);
/* Each link with a state file in `dir`: fn(ctx, name, its path); the
 * number of them. */
unsigned cli_link_each(const char *dir, void (*fn)(void *ctx, const char *name, const char *path),
                       void *ctx);

/* Wall clock in seconds (monotonic) for reporting run times. */
double cli_now(void);

/* ---- sweep points on threads (cli_jobs.c) -------------------------------- */

/* Threads for npoints points: `requested` (--jobs), or one per CPU when 0;
 * at most one per point and 256. */
unsigned cli_job_count(uint64_t requested, size_t npoints);

/* n independent points: run(ctx, i) computes point i on a worker thread
 * (it must touch only point i's state), print(ctx, i) prints it on the
 * calling thread and returns its exit status.  Points start costliest
 * first (cost may be NULL: in sweep order) and are printed in sweep order
 * as they finish, so the output does not depend on the number of jobs. */
struct cli_jobs {
    size_t n;
    const double *cost;
    void (*run)(void *ctx, size_t i);
    int (*print)(void *ctx, size_t i);
    void *ctx;
    bool progress;   /* sweep progress on stderr even when not a terminal */
};

/* Runs the points on `jobs` threads; returns the worst exit status, or -1
 * when out of memory. */
int cli_jobs_run(const struct cli_jobs *j, unsigned jobs);

/* ---- packet captures of simulated lanes (cli_pcap.c) ---------------------- */

/* Writes the frames that arrived at the two lanes of a pair in one slot
 * (arrived[1] went A -> B: direction 0), building wire bytes from frames
 * carried by content; RIFL_ERR_IO when a write failed. */
struct rifl_capture;
int cli_pcap_arrivals(struct rifl_capture *cap, const rifl_phy_frame arrived[2],
                      unsigned frame_bits, uint64_t seq, uint64_t t_ns);

/* ---- rifl sim switch --pcap (cli_swcap.c) ------------------------------- */

/* The frames of one host's link of the switch simulator, carried by a pair
 * of lanes run beside it: open it, give cli_swcap_watch to the simulator as
 * its watch hook (rifl_ssim_config.watch), close it after the run. */
struct cli_swcap;
struct rifl_ssim_watch;
int cli_swcap_open(struct cli_swcap **out, const char *path, double cell_ns, unsigned latency,
                   unsigned host, uint64_t slots, char *msg, size_t msglen);
void cli_swcap_watch(void *ctx, const struct rifl_ssim_watch *w);
/* Runs the lanes to the end of the capture (or of the run, `run_slots`
 * cell times, if that comes first) and until all they were given has
 * arrived; writes the file; prints what was captured. */
int cli_swcap_close(struct cli_swcap *c, uint64_t run_slots, const char *path, char *msg,
                    size_t msglen);

#endif
