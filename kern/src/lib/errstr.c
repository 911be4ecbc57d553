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
	[EBADF] = "bad file descriptor",
	[EAGAIN] = "resource temporarily unavailable",
	[ENOMEM] = "out of memory",
	[EACCES] = "permission denied",
	[EFAULT] = "bad address",
	[EBUSY] = "device or resource busy",
	[EEXIST] = "file already exists",
	[ENOTDIR] = "not a directory",
	[EISDIR] = "is a directory",
	[EINVAL] = "invalid argument",
	[EMFILE] = "too many open files",
	[EFBIG] = "file too large",
	[ENOSPC] = "no space left on device",
	[ESPIPE] = "illegal seek",
	[EROFS] = "read-only file system",
	[EPIPE] = "broken pipe (reader or writer hung up)",
	[ERANGE] = "result out of range",
	[ENAMETOOLONG] = "file name too long",
	[ENOSYS] = "function not implemented",
	[ENOTEMPTY] = "directory not empty",
	[ENODATA] = "no data available",
	[EPROTO] = "protocol error",
	[EOVERFLOW] = "value too large",
	[ENOTSUP] = "operation not supported",
	[ETIMEDOUT] = "timed out",
};

/* Accepts -err or err; never NULL. */
const char *strerror(int err)
{
	unsigned int e = err < 0 ? 0u - (unsigned int)err : (unsigned int)err;

	if (e == 0)
		return "success";
	if (e < ARRAY_SIZE(errtab) && errtab[e])
		return errtab[e];
	return "unknown error";
}
