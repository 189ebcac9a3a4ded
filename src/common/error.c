#include "rifl/error.h"

#include <stdarg.h>
#include <stdio.h>


const char *rifl_strerror(int err)
{
    switch (err) {
    case RIFL_OK: return "success";
    case RIFL_ERR_INVALID_ARG: return "invalid argument";
    case RIFL_ERR_CONFIG: return "configuration refused";
    case RIFL_ERR_AGAIN: return "resource temporarily unavailable";
    case RIFL_ERR_TOO_BIG: return "item too large for its queue";
    case RIFL_ERR_NOMEM: return "out of memory";
    case RIFL_ERR_PARSE: return "malformed input";
    case RIFL_ERR_FRAME: return "malformed frame";
    case RIFL_ERR_IO: return "input/output error";
    case RIFL_ERR_UNREACHABLE: return "destination unreachable";
    case RIFL_ERR_STATE: return "not valid in the current state";
    case RIFL_ERR_BUFFER: return "buffer too small";
    case RIFL_ERR_UNSUPPORTED: return "not supported on this machine";
    case RIFL_ERR_PROTECTION: return "local protection error";
    case RIFL_ERR_REMOTE_PROTECTION: return "remote protection error";
    case RIFL_ERR_RETRY_EXCEEDED: return "retries exceeded";
    case RIFL_ERR_TIMEOUT: return "timed out";
    case RIFL_ERR_PEER_RESTARTED: return "the peer restarted";
    default: return "unknown error";
    }
}

void rifl_msg(char *msg, size_t msglen, const char *fmt, ...)
{
    if (!msg || !msglen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
}

int rifl_null_arg(char *msg, size_t msglen, const char *fn, const char *arg)
{
    rifl_msg(msg, msglen, "%s: %s is NULL", fn, arg);
    return RIFL_ERR_INVALID_ARG;
}
