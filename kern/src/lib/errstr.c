/*
 * Clear texts for kernel error numbers (error.h), as the shell prints them:
 * "cat: file does not exist". One table indexed by the error number.
 */
#include "kernel.h"
#include "error.h"

static const char *const errtab[] = {
	[EPERM] = "operation not permitted",
	[ENOENT] = "file does not exist",
	[ENODEV] = "no such device",
	[EINTR] = "interrupted",
	[EIO] = "i/o error",
	[ENXIO] = "not a regular file (a FIFO, socket or device)",
	[E2BIG] = "argument list too long",
	[EBADF] = "bad file descriptor",
	[EAGAIN] = "resource temporarily unavailable",
	[ENOMEM] = "out of memory",
	[EACCES] = "permission denied",
	[EFAULT] = "bad address",
	[EBUSY] = "device or resource busy",
	[EEXIST] = "file already exists",
	[EXDEV] = "cross-device link",
	[ENOTDIR] = "not a directory",
	[EISDIR] = "is a directory",
	[EINVAL] = "invalid argument",
	[EMFILE] = "too many open files",
	[ETXTBSY] = "text file busy",
	[EFBIG] = "file too large",
	[ENOSPC] = "no space left on device",
	[ESPIPE] = "illegal seek",
	[EROFS] = "read-only file system",
	[EMLINK] = "too many links",
	[EPIPE] = "broken pipe (reader or writer hung up)",
	[ERANGE] = "result out of range",
	[ENAMETOOLONG] = "file name too long",
	[ENOSYS] = "function not implemented",
	[ENOTEMPTY] = "directory not empty",
	[ELOOP] = "a symbolic link (links on the share are not followed)",
	[ENODATA] = "no data available",
	[EPROTO] = "protocol error",
	[EOVERFLOW] = "value too large",
	[ENOTSUP] = "operation not supported",
	[ETIMEDOUT] = "timed out",
	[ESTALE] = "stale file handle",
	[EDQUOT] = "disk quota exceeded",
};

/* Accepts -err or err; never NULL. */
const char *strerror(int err)
{
	unsigned int e = err < 0 ? 0u - (unsigned int)err : (unsigned int)err;

	if (e == 0)
		return "success";
	if (e < ARRAY_SIZE(errtab) && errtab[e])
		return errtab[e];
	return "unknown error (the host's errno is not one this kernel names)";
}
