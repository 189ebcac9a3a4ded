/* `rifl plot`: turn CSV output of `rifl sim link --sweep ... --csv` or
 * `rifl calc fig8` into a PNG figure with gnuplot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int find_col(const char *header, const char *name)
{
    char *h = strdup(header), *save = NULL;
    int col = 0, found = -1;
    for (char *f = strtok_r(h, ",\r", &save); f; f = strtok_r(NULL, ",\r", &save), col++)
        if (!strcmp(f, name))
            found = col;
    free(h);
    return found;
}

static void gp_quote(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
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
        { "y", CLI_STRING, &y, "comma-separated columns for the y axis", 0, 0 },
        { "out", CLI_STRING, &out, "PNG file to write", 0, 0 },
        { "xlabel", CLI_STRING, &xlabel, "x axis label with unit", 0, 0 },
        { "ylabel", CLI_STRING, &ylabel, "y axis label with unit", 0, 0 },
        { "title", CLI_STRING, &title, "figure title", 0, 0 },
        { "titles", CLI_STRING, &titles, "comma-separated legend entries (default: column names)", 0, 0 },
        { "yrange", CLI_STRING, &yrange, "y range as LO:HI", 0, 0 },
        { "style", CLI_STRING, &style, "gnuplot style: lines, points, linespoints", 0, 0 },
        { "key", CLI_STRING, &key, "legend position (gnuplot words)", 0, 0 },
        { "scale", CLI_DOUBLE, &scale, "multiply y values by this", 0, 0 },
        { "logx", CLI_FLAG, &logx, "logarithmic x axis", 0, 0 },
        { "logy", CLI_FLAG, &logy, "logarithmic y axis", 0, 0 },
        CLI_END,
    };
    char *pos[1];
    int np = 0;
    int rc = cli_parse(argc, argv, opts, "FILE.csv --out FIG.png [options]",
                       "Plots columns of a CSV file (a header line, then numbers) with gnuplot\n"
                       "into a PNG, e.g. the output of `rifl sim link --sweep ... --csv`.",
                       pos, 1, &np);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (np != 1 || !out) {
        fprintf(stderr, "error: 'rifl plot' needs a CSV file and --out FIG.png\n");
        return 2;
    }
    size_t len;
    char *csv = cli_read_file(pos[0], &len);
    if (!csv)
        return 2;
    char *nl = strchr(csv, '\n');
    if (nl)
        *nl = '\0';
    int cx = find_col(csv, x);
    if (cx < 0) {
        fprintf(stderr, "error: %s has no column '%s' (header: %s)\n", pos[0], x, csv);
        free(csv);
        return 2;
    }
    int cy[16], ny = 0;
    char *ys = strdup(y), *save = NULL;
    for (char *f = strtok_r(ys, ",", &save); f && ny < 16; f = strtok_r(NULL, ",", &save)) {
        cy[ny] = find_col(csv, f);
        if (cy[ny] < 0) {
            fprintf(stderr, "error: %s has no column '%s' (header: %s)\n", pos[0], f, csv);
            free(ys);
            free(csv);
            return 2;
        }
        ny++;
    }
    char *names[16];
    int nt = 0;
    char *ts = titles ? strdup(titles) : strdup(y);
    save = NULL;
    for (char *f = strtok_r(ts, ",", &save); f && nt < 16; f = strtok_r(NULL, ",", &save))
        names[nt++] = f;
    FILE *g = popen("gnuplot", "w");
    if (!g) {
        fprintf(stderr, "error: cannot run gnuplot; install it (scripts/install-deps.sh)\n");
        free(ys);
        free(ts);
        free(csv);
        return 2;
    }
    fprintf(g, "set terminal pngcairo size 900,600 enhanced font 'Sans,11'\nset output ");
    gp_quote(g, out);
    fprintf(g, "\nset datafile separator ','\nset key autotitle columnhead\nset grid\n");
    for (const char *k = key; *k; k++)
        if (!(*k == ' ' || (*k >= 'a' && *k <= 'z'))) {
            fprintf(stderr, "error: option --key: use gnuplot position words such as "
                    "'bottom right'\n");
            pclose(g);
            free(ys);
            free(ts);
            free(csv);
            return 2;
        }
    fprintf(g, "set key %s\n", key);
    if (title) {
        fprintf(g, "set title ");
        gp_quote(g, title);
        fputc('\n', g);
    }
    fprintf(g, "set xlabel ");
    gp_quote(g, xlabel ? xlabel : x);
    fprintf(g, "\nset ylabel ");
    gp_quote(g, ylabel ? ylabel : y);
    fputc('\n', g);
    if (logx)
        fprintf(g, "set logscale x\nset format x '10^{%%L}'\n");
    if (logy)
        fprintf(g, "set logscale y\n");
    if (yrange)
        fprintf(g, "set yrange [%s]\n", yrange);
    fprintf(g, "plot ");
    for (int i = 0; i < ny; i++) {
        fprintf(g, "%s", i ? ", " : "");
        gp_quote(g, pos[0]);
        fprintf(g, " using %d:($%d*%g) with %s lw 2 title ", cx + 1, cy[i] + 1, scale, style);
        gp_quote(g, i < nt ? names[i] : "");
    }
    fputc('\n', g);
    int st = pclose(g);
    free(ys);
    free(ts);
    free(csv);
    if (st != 0) {
        fprintf(stderr, "error: gnuplot failed (exit status %d)\n", st);
        return 2;
    }
    fprintf(stderr, "wrote %s\n", out);
    return 0;
}

const struct rifl_command rifl_cmd_plot = {
    "plot", "plot columns of a sweep CSV into a PNG with gnuplot", run
};
