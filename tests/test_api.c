/* The umbrella header compiles on its own and every error code has a text. */
#include "testlib.h"

#include "rifl/rifl.h"

static void t_error_texts(void)
{
    for (int e = 0; e >= RIFL_ERR_BUFFER; e--) {
        const char *t = rifl_strerror(e);
        CHECK(t != NULL && strcmp(t, "unknown error") != 0);
    }
    CHECK(strcmp(rifl_strerror(-999), "unknown error") == 0);
}

TEST_MAIN({ "error_texts", t_error_texts })
