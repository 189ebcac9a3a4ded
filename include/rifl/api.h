/* rifl: RIFL_API marks the functions and data the libraries export; the
 * libraries are built with hidden visibility, so nothing else is. */
#ifndef RIFL_API_H
#define RIFL_API_H

#if defined(__GNUC__) || defined(__clang__)
#define RIFL_API __attribute__((visibility("default")))
#else
#define RIFL_API
#endif

#endif
