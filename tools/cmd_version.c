/* `rifl version`: print the library version. */
#include <stdio.h>

#include "cli.h"

static int run(int argc, char **argv)
{
    struct cli_opt opts[] = { CLI_END };
    int rc = cli_parse(argc, argv, opts, "", "Prints the version of rifl.", NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    printf("rifl %s\n", RIFL_VERSION);
    return 0;
}

const struct rifl_command rifl_cmd_version = { "version", "print the version", run };
