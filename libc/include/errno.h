#ifndef _ERRNO_H
#define _ERRNO_H
#include <_libc.h>
/* One errno for all instances of all apps (there is no thread-local storage). */
extern int errno __LIBC(errno);
#define EDOM 33
#define ERANGE 34
#define EINVAL 22
#define ENOMEM 12
#endif
