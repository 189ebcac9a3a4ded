/* `rifl version`: print the library version. */
#include <stdio.h>

#include "cli.h"

static int run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("rifl 0.1.0\n");
    return 0;
}

const struct rifl_command rifl_cmd_version = { "version", "print the version", run };
