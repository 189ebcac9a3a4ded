/* rifl: command-line front end.  `rifl <command> [subcommand] [options]`. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "rifl_commands.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: rifl <command> [options]   (rifl <command> --help for details)\n\n"
               "commands:\n");
    for (const struct rifl_command *const *c = rifl_commands; *c; c++)
        fprintf(f, "  %-16s %s\n", (*c)->name, (*c)->summary);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("rifl %s\n", RIFL_VERSION);
        return 0;
    }
    /* two-word commands ("sim link") take precedence over one-word ones */
    if (argc >= 3) {
        char two[128];
        snprintf(two, sizeof two, "%s %s", argv[1], argv[2]);
        for (const struct rifl_command *const *c = rifl_commands; *c; c++)
            if (!strcmp((*c)->name, two)) {
                argv[2] = (char *)(*c)->name;
                return (*c)->run(argc - 2, argv + 2);
            }
    }
    for (const struct rifl_command *const *c = rifl_commands; *c; c++)
        if (!strcmp((*c)->name, argv[1])) {
            argv[1] = (char *)(*c)->name;
            return (*c)->run(argc - 1, argv + 1);
        }
    /* a group of subcommands ("sim", "bench"): --help lists them (exit 0);
     * alone or with an unknown subcommand it explains (exit 2) */
    int group = 0;
    size_t n = strlen(argv[1]);
    bool help = argc >= 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"));
    FILE *out = help ? stdout : stderr;
    for (const struct rifl_command *const *c = rifl_commands; *c; c++)
        if (!strncmp((*c)->name, argv[1], n) && (*c)->name[n] == ' ') {
            if (!group++) {
                if (help)
                    fprintf(out, "usage: rifl %s <subcommand> [options]   (rifl %s <subcommand> "
                            "--help for details)\n\nsubcommands:\n", argv[1], argv[1]);
                else if (argc >= 3)
                    fprintf(out, "error: 'rifl %s' has no subcommand '%s'; use one of:\n",
                            argv[1], argv[2]);
                else
                    fprintf(out, "'rifl %s' needs a subcommand:\n", argv[1]);
            }
            fprintf(out, "  rifl %-14s %s\n", (*c)->name, (*c)->summary);
        }
    if (group)
        return help ? 0 : 2;
    fprintf(stderr, "error: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
