/* Private helper for the library's explanatory messages. Not installed. */
#ifndef RIFL_COMMON_MSG_H
#define RIFL_COMMON_MSG_H

#include <stddef.h>

/* printf-style message into a caller's buffer (nothing when msg is NULL or
 * msglen is 0). */
void rifl_msg(char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A required pointer argument `arg` of `fn` was NULL: says so in msg and
 * returns RIFL_ERR_INVALID_ARG. */
int rifl_null_arg(char *msg, size_t msglen, const char *fn, const char *arg);

#endif
