/*
 * Kernel errors are small negative numbers (the Linux errno values, so that 9P2000.L's
 * Rlerror carries them unchanged) and travel up as return values: a function returning
 * long or int gives -ENOENT, a pointer-returning one gives NULL and says which in its
 * comment. strerror() turns one into the clear text the shell prints.
 */
#ifndef ERROR_H
#define ERROR_H

#define EPERM		1
#define ENOENT		2
#define EINTR		4
#define EIO		5
#define ENXIO		6
#define E2BIG		7
#define EBADF		9
#define EAGAIN		11
#define ENOMEM		12
#define EACCES		13
#define EFAULT		14
#define EBUSY		16
#define EEXIST		17
#define EXDEV		18
#define ENODEV		19
#define ENOTDIR		20
#define EISDIR		21
#define EINVAL		22
#define EMFILE		24
#define ETXTBSY		26
#define EFBIG		27
#define ENOSPC		28
#define ESPIPE		29
#define EROFS		30
#define EMLINK		31
#define EPIPE		32
#define ERANGE		34
#define ENAMETOOLONG	36
#define ENOSYS		38
#define ENOTEMPTY	39
#define ELOOP		40
#define ENODATA		61
#define EPROTO		71
#define EOVERFLOW	75
#define ENOTSUP		95
#define ETIMEDOUT	110
#define ESTALE		116
#define EDQUOT		122

/* Clear text for -err or err; never NULL. */
const char *strerror(int err);

#endif
