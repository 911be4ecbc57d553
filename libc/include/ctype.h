#ifndef _CTYPE_H
#define _CTYPE_H
#include <_libc.h>
int isalnum(int c) __LIBC(isalnum);
int isalpha(int c) __LIBC(isalpha);
int isblank(int c) __LIBC(isblank);
int iscntrl(int c) __LIBC(iscntrl);
int isdigit(int c) __LIBC(isdigit);
int isgraph(int c) __LIBC(isgraph);
int islower(int c) __LIBC(islower);
int isprint(int c) __LIBC(isprint);
int ispunct(int c) __LIBC(ispunct);
int isspace(int c) __LIBC(isspace);
int isupper(int c) __LIBC(isupper);
int isxdigit(int c) __LIBC(isxdigit);
int tolower(int c) __LIBC(tolower);
int toupper(int c) __LIBC(toupper);
#endif
