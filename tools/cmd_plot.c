/* `rifl plot`: turn CSV output of `rifl sim link --sweep ... --csv` or
 * `rifl calc fig8` into a PNG figure with gnuplot.  Everything is checked
 * before gnuplot runs: the output path, the columns, and every cell of the
 * plotted columns (a number, or empty for a gap); the figure is written to a
 * temporary file beside --out and renamed only when gnuplot succeeds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_Y 16

static const struct cli_opt *g_opts; /* the option table, for messages */

/* split a line at commas in place; returns the field count (at most max) */
static int split(char *line, char **f, int max)
{
    int n = 0;
    for (;;) {
        size_t k = strcspn(line, ",");
        char end = line[k];
        line[k] = '\0';
        if (n < max)
            f[n] = line;
        n++;
        if (!end)
            break;
        line += k + 1;
    }
    return n;
}

/* --yrange: LO:HI, each a number, '*' or empty (automatic) */
static int check_yrange(const char *r)
{
    const char *c = strchr(r, ':');
    double lo = NAN, hi = NAN;
    char a[64], b[64];
    if (!c || strchr(c + 1, ':') || (size_t)(c - r) >= sizeof a || strlen(c + 1) >= sizeof b)
        goto bad;
    memcpy(a, r, (size_t)(c - r));
    a[c - r] = '\0';
    snprintf(b, sizeof b, "%s", c + 1);
    if (a[0] && strcmp(a, "*") && cli_parse_double(a, &lo))
        goto bad;
    if (b[0] && strcmp(b, "*") && cli_parse_double(b, &hi))
        goto bad;
    if (!isnan(lo) && !isnan(hi) && !(lo < hi))
        return cli_fail(g_opts, "yrange", "'%s': LO must be below HI", r);
    return 0;
bad:
    return cli_fail(g_opts, "yrange", "'%s' is not a range; use LO:HI with numbers (either may "
                    "be * or empty for automatic), e.g. 0:1.05", r);
}

/* what the gnuplot script draws */
struct figure {
    const char *key, *title, *xlabel, *ylabel, *x, *y, *yrange, *style, *csv;
    bool logx, logy;
    double scale;
    int cx, *cy, ny;
    char **titles, **ynames; /* titles: NULL for the column names */
};

static void write_figure(FILE *g, void *ctx)
{
    const struct figure *fg = ctx;
    fprintf(g, "set datafile separator ','\nset key autotitle columnhead\nset grid\n");
    fprintf(g, "set key %s\n", fg->key);
    if (fg->title) {
        fprintf(g, "set title ");
        cli_gp_quote(g, fg->title);
        fputc('\n', g);
    }
    /* column names are shown as written (no _ subscripts); labels given by
     * the user keep gnuplot's enhanced text */
    fprintf(g, "set xlabel ");
    cli_gp_quote(g, fg->xlabel ? fg->xlabel : fg->x);
    fprintf(g, "%s\nset ylabel ", fg->xlabel ? "" : " noenhanced");
    cli_gp_quote(g, fg->ylabel ? fg->ylabel : fg->y);
    fprintf(g, "%s\n", fg->ylabel ? "" : " noenhanced");
    if (fg->logx)
        fprintf(g, "set logscale x\nset format x '10^{%%L}'\n");
    if (fg->logy)
        fprintf(g, "set logscale y\n");
    if (fg->yrange)
        fprintf(g, "set yrange [%s]\n", fg->yrange);
    fprintf(g, "plot ");
    for (int i = 0; i < fg->ny; i++) {
        fprintf(g, "%s", i ? ", " : "");
        cli_gp_quote_path(g, fg->csv);
        fprintf(g, " using %d:($%d*%.17g) with %s lw 2 title ", fg->cx + 1, fg->cy[i] + 1,
                fg->scale, fg->style);
        cli_gp_quote(g, fg->titles ? fg->titles[i] : fg->ynames[i]);
        if (!fg->titles)
            fprintf(g, " noenhanced");
    }
    fprintf(g, "\n");
}

/* --style: one of gnuplot's plain styles */
static int check_style(const char *style)
{
    static const char *const styles[] = { "lines", "points", "linespoints", "steps", "impulses",
                                          NULL };
    bool style_ok = false;
    for (const char *const *s = styles; *s; s++)
        style_ok = style_ok || !strcmp(style, *s);
    if (!style_ok)
        return cli_fail(g_opts, "style", "'%s' is not a style; use lines, points, linespoints, "
                        "steps or impulses", style);
    return 0;
}

/* --key: gnuplot's words for the legend's place and frame */
static int check_key(const char *key)
{
    static const char *const key_words[] = {
        "left", "right", "center", "top", "bottom", "inside", "outside", "above", "below",
        "over", "under", "lmargin", "rmargin", "tmargin", "bmargin", "horizontal", "vertical",
        "box", "nobox", "opaque", "noopaque", "reverse", "noreverse", "invert", "noinvert",
        "off", "on", NULL };
    char kw[128];
    snprintf(kw, sizeof kw, "%s", key);
    char *ksave = NULL;
    int nk = 0;
    for (char *w = strtok_r(kw, " ", &ksave); w; w = strtok_r(NULL, " ", &ksave), nk++) {
        bool known = false;
        for (const char *const *k = key_words; *k && !known; k++)
            known = !strcmp(w, *k);
        if (!known)
            return cli_fail(g_opts, "key", "'%s' is not a legend position word; use words such "
                            "as left, right, center, top, bottom, outside, box or off", w);
    }
    if (!nk || strlen(key) >= sizeof kw)
        return cli_fail(g_opts, "key", "give a legend position such as 'bottom right'");
    return 0;
}

/* --y and --titles: at most MAX_Y named columns, one legend entry each */
static int check_columns(const char *y, char **yname, int ny, bool titles, int nt)
{
    int status = 0;
    if (ny > MAX_Y)
        status = cli_fail(g_opts, "y", "%d columns; plot at most %d at once", ny, MAX_Y);
    for (int i = 0; i < ny && i < MAX_Y && !status; i++)
        if (!yname[i][0])
            status = cli_fail(g_opts, "y", "'%s' has an empty column name", y);
    if (!status && titles && nt != ny)
        status = cli_fail(g_opts, "titles,y", "%d legend entr%s for %d column%s; give one per "
                          "column", nt, nt == 1 ? "y" : "ies", ny, ny == 1 ? "" : "s");
    return status;
}

/* what the reading of the CSV found */
struct scan {
    char *hdr[256];  /* the header's column names, in the CSV text */
    char *header;    /* a copy of the header line; NULL until one is read */
    int ncols;
    unsigned numbers[MAX_Y], rows;
};

/* the header: find the plotted columns (fg->cx and fg->cy) */
static int find_columns(struct figure *fg, struct scan *s, char *line)
{
    s->header = strdup(line);
    s->ncols = split(line, s->hdr, 256);
    if (s->ncols > 256)
        s->ncols = 256;
    for (int c = 0; c < s->ncols; c++)
        if (!strcmp(s->hdr[c], fg->x))
            fg->cx = c;
    for (int i = 0; i < fg->ny; i++) {
        fg->cy[i] = -1;
        for (int c = 0; c < s->ncols; c++)
            if (!strcmp(s->hdr[c], fg->ynames[i]))
                fg->cy[i] = c;
    }
    const char *missing = fg->cx < 0 ? fg->x : NULL;
    const char *opt = "x";
    for (int i = 0; i < fg->ny && !missing; i++)
        if (fg->cy[i] < 0) {
            missing = fg->ynames[i];
            opt = "y";
        }
    if (missing)
        return cli_fail(g_opts, opt, "%s has no column '%s' (header: %s)", fg->csv, missing,
                        s->header ? s->header : "");
    return 0;
}

/* the plotted cells of a data row: numbers or empty (gaps) */
static int check_cells(const struct figure *fg, struct scan *s, char **f, unsigned lineno)
{
    int status = 0;
    double xv = NAN;
    for (int i = -1; i < fg->ny && !status; i++) {
        int c = i < 0 ? fg->cx : fg->cy[i];
        double v;
        if (!f[c][0]) {
            if (i < 0) {
                fprintf(stderr, "error: %s:%u: the x column '%s' is empty\n", fg->csv, lineno,
                        fg->x);
                status = 2;
            }
            continue;
        }
        if (cli_parse_double(f[c], &v)) {
            fprintf(stderr, "error: %s:%u: column '%s' holds '%s', not a number; fix "
                    "the row (or leave the cell empty for a gap)\n", fg->csv, lineno,
                    s->hdr[c], f[c]);
            status = 2;
            break;
        }
        if (i < 0)
            xv = v;
        else
            s->numbers[i]++;
        if (i < 0 && fg->logx && v <= 0)
            fprintf(stderr, "warning: %s:%u: x = %s cannot go on a logarithmic axis "
                    "(--logx); gnuplot leaves the row out\n", fg->csv, lineno, f[c]);
        if (i >= 0 && fg->logy && v * fg->scale <= 0)
            fprintf(stderr, "warning: %s:%u: %s = %g (scaled) cannot go on a "
                    "logarithmic axis (--logy); gnuplot leaves the point out\n", fg->csv,
                    lineno, s->hdr[c], v * fg->scale);
    }
    (void)xv;
    return status;
}

/* read the header and check every data row, then that each y column has a
 * number */
static int scan_csv(struct figure *fg, struct scan *s, char *csv)
{
    int status = 0;
    char *p = csv;
    unsigned lineno = 0;
    char *line;
    while ((line = cli_next_line(&p))) {
        lineno++;
        if (!line[0] || line[0] == '#')
            continue;
        if (!s->header) {
            /* header: the first line that is not a comment */
            if ((status = find_columns(fg, s, line)))
                break;
            continue;
        }
        char *f[256];
        int nf = split(line, f, 256);
        int need = fg->cx;
        for (int i = 0; i < fg->ny; i++)
            need = fg->cy[i] > need ? fg->cy[i] : need;
        if (nf <= need) {
            fprintf(stderr, "error: %s:%u: %d field%s, the header has %d; every row needs "
                    "the plotted columns\n", fg->csv, lineno, nf, nf == 1 ? "" : "s", s->ncols);
            status = 2;
            break;
        }
        if (!status)
            status = check_cells(fg, s, f, lineno);
        s->rows++;
    }
    if (!status && !s->header) {
        fprintf(stderr, "error: %s has no header line (a line of column names, then rows "
                "of numbers)\n", fg->csv);
        status = 2;
    }
    if (!status && !s->rows) {
        fprintf(stderr, "error: %s has a header but no data rows\n", fg->csv);
        status = 2;
    }
    for (int i = 0; i < fg->ny && !status; i++)
        if (!s->numbers[i])
            status = cli_fail(g_opts, "y", "column '%s' of %s has no numbers, only empty "
                              "cells (bandwidth_ratio is empty after a run with "
                              "--reference false)", fg->ynames[i], fg->csv);
    return status;
}

/* check the columns and the CSV fg->csv, then draw it into `out` */
static int plot_csv(struct figure *fg, const char *titles, const char *out, const char *where)
{
    char *ys = strdup(fg->y), *yname[MAX_Y + 1];
    char *ts = titles ? strdup(titles) : NULL, *tname[MAX_Y + 1];
    if (!ys || (titles && !ts)) {
        free(ys);
        free(ts);
        fprintf(stderr, "error: out of memory\n");
        return 2;
    }
    int ny = split(ys, yname, MAX_Y + 1), nt = ts ? split(ts, tname, MAX_Y + 1) : 0;
    size_t len;
    char *csv = NULL;
    int status = check_columns(fg->y, yname, ny, ts != NULL, nt);
    if (!status && !(csv = cli_read_file(fg->csv, &len)))
        status = 2;
    int cy[MAX_Y];
    struct scan s = { .header = NULL };
    fg->cx = -1;
    fg->cy = cy;
    fg->ny = ny;
    fg->titles = ts ? tname : NULL;
    fg->ynames = yname;
    if (!status)
        status = scan_csv(fg, &s, csv);
    if (!status)
        status = cli_gnuplot(out, where, NULL, write_figure, fg);
    free(s.header);
    free(ys);
    free(ts);
    free(csv);
    if (!status)
        fprintf(stderr, "wrote %s\n", out);
    return status;
}

static int run(int argc, char **argv)
{
    const char *x = "ber", *y = "bandwidth_ratio", *out = NULL, *xlabel = NULL, *ylabel = NULL;
    const char *title = NULL, *titles = NULL, *yrange = NULL, *style = "linespoints";
    const char *key = "bottom right";
    bool logx = false, logy = false;
    double scale = 1;
    struct cli_opt opts[] = {
        { "x", CLI_STRING, &x, "column for the x axis", 0, 0 },
        { "y", CLI_STRING, &y, "comma-separated columns for the y axis (at most 16)", 0, 0 },
        { "out", CLI_STRING, &out, "PNG file to write", 0, 0 },
        { "xlabel", CLI_STRING, &xlabel, "x axis label with unit", 0, 0 },
        { "ylabel", CLI_STRING, &ylabel, "y axis label with unit", 0, 0 },
        { "title", CLI_STRING, &title, "figure title", 0, 0 },
        { "titles", CLI_STRING, &titles, "comma-separated legend entries, one per y column "
          "(default: column names)", 0, 0 },
        { "yrange", CLI_STRING, &yrange, "y range as LO:HI (* or empty: automatic)", 0, 0 },
        { "style", CLI_STRING, &style, "gnuplot style: lines, points, linespoints, steps or "
          "impulses", 0, 0 },
        { "key", CLI_STRING, &key, "legend position (gnuplot words)", 0, 0 },
        { "scale", CLI_DOUBLE, &scale, "multiply y values by this", -1e300, 1e300 },
        { "logx", CLI_FLAG, &logx, "logarithmic x axis", 0, 0 },
        { "logy", CLI_FLAG, &logy, "logarithmic y axis", 0, 0 },
        CLI_END,
    };
    g_opts = opts;
    char *pos[1];
    int np = 0;
    int rc = cli_parse(argc, argv, opts, "FILE.csv --out FIG.png [options]",
                       "Plots columns of a CSV file (a header line, then rows of numbers; an\n"
                       "empty cell is a gap, e.g. bandwidth_ratio of a run without reference or\n"
                       "ethernet100g below its smallest frame) with gnuplot into a PNG, e.g. the\n"
                       "output of `rifl sim link --sweep ... --csv`.  Lines starting with # are\n"
                       "comments.  A cell that is neither a number nor empty is an error.",
                       pos, 1, &np);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (np != 1 || !out) {
        fprintf(stderr, "error: 'rifl plot' needs a CSV file and --out FIG.png\n");
        return 2;
    }
    if (!strcmp(pos[0], "-")) {
        fprintf(stderr, "error: 'rifl plot' reads its CSV twice (here and in gnuplot); give a "
                "file name, not -\n");
        return 2;
    }
    if (check_style(style) || check_key(key))
        return 2;
    if (yrange && check_yrange(yrange))
        return 2;
    char where[300];
    snprintf(where, sizeof where, "%s", cli_where(opts, "out"));
    if (cli_check_output(out, where))
        return 2;
    struct figure fig = { key, title, xlabel, ylabel, x, y, yrange, style, pos[0], logx, logy,
                          scale, -1, NULL, 0, NULL, NULL };
    return plot_csv(&fig, titles, out, where);
}

const struct rifl_command rifl_cmd_plot = {
    "plot", "plot columns of a sweep CSV into a PNG with gnuplot", run
};
