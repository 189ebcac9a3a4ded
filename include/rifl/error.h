/* rifl: one error type for the whole library.
 *
 * Every fallible call returns an int: RIFL_OK (0) on success, or a negative
 * rifl_err value.  rifl_strerror() gives a short fixed text for each; calls
 * that can explain more (configuration checks, parsers) also fill a
 * caller-owned message buffer. */
#ifndef RIFL_ERROR_H
#define RIFL_ERROR_H

#include "rifl/api.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rifl_err {
    RIFL_OK = 0,
    RIFL_ERR_INVALID_ARG = -1,   /* an argument is out of range or NULL */
    RIFL_ERR_CONFIG = -2,        /* a configuration is refused (see message) */
    RIFL_ERR_AGAIN = -3,         /* would block: queue full or nothing ready */
    RIFL_ERR_TOO_BIG = -4,       /* item larger than the queue can ever hold */
    RIFL_ERR_NOMEM = -5,         /* allocation failed */
    RIFL_ERR_PARSE = -6,         /* malformed input text or file */
    RIFL_ERR_FRAME = -7,         /* malformed wire frame */
    RIFL_ERR_IO = -8,            /* file or socket error */
    RIFL_ERR_UNREACHABLE = -9,   /* no route to a destination */
    RIFL_ERR_STATE = -10,        /* call not valid in the current state */
    RIFL_ERR_BUFFER = -11,       /* caller's buffer too small */
    RIFL_ERR_UNSUPPORTED = -12,  /* not available on this machine (CPU features) */
    RIFL_ERR_PROTECTION = -13,   /* local memory: not registered to the domain,
                                    out of bounds or without the right */
    RIFL_ERR_REMOTE_PROTECTION = -14, /* the remote end refused the access */
    RIFL_ERR_RETRY_EXCEEDED = -15,    /* given up after the retries allowed */
    RIFL_ERR_TIMEOUT = -16,           /* no answer in the time allowed */
    RIFL_ERR_PEER_RESTARTED = -17     /* the peer restarted before the operation
                                         finished: its outcome there is unknown */
} rifl_err;

/* Fixed text for an error code; never NULL. */
RIFL_API const char *rifl_strerror(int err);

/* For code that reports in the library's style (a PHY, a port, a tool):
 * a printf-style explanation into a caller's message buffer (nothing when
 * msg is NULL or msglen is 0). */
RIFL_API void rifl_msg(char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "FN: ARG is NULL" into msg; returns RIFL_ERR_INVALID_ARG. */
RIFL_API int rifl_null_arg(char *msg, size_t msglen, const char *fn, const char *arg);

#ifdef __cplusplus
}
#endif
#endif
