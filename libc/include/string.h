#ifndef _STRING_H
#define _STRING_H
#include <_libc.h>
#include <stddef.h>
void *memcpy(void *restrict d, const void *restrict s, size_t n) __LIBC(memcpy);
void *memmove(void *d, const void *s, size_t n) __LIBC(memmove);
void *memset(void *d, int c, size_t n) __LIBC(memset);
int memcmp(const void *a, const void *b, size_t n) __LIBC(memcmp);
void *memchr(const void *s, int c, size_t n) __LIBC(memchr);
size_t strlen(const char *s) __LIBC(strlen);
size_t strnlen(const char *s, size_t n) __LIBC(strnlen);
char *strcpy(char *restrict d, const char *restrict s) __LIBC(strcpy);
char *strncpy(char *restrict d, const char *restrict s, size_t n) __LIBC(strncpy);
char *strcat(char *restrict d, const char *restrict s) __LIBC(strcat);
char *strncat(char *restrict d, const char *restrict s, size_t n) __LIBC(strncat);
int strcmp(const char *a, const char *b) __LIBC(strcmp);
int strncmp(const char *a, const char *b, size_t n) __LIBC(strncmp);
int strcoll(const char *a, const char *b) __LIBC(strcmp);
char *strchr(const char *s, int c) __LIBC(strchr);
char *strrchr(const char *s, int c) __LIBC(strrchr);
char *strstr(const char *h, const char *n) __LIBC(strstr);
size_t strspn(const char *s, const char *acc) __LIBC(strspn);
size_t strcspn(const char *s, const char *rej) __LIBC(strcspn);
char *strpbrk(const char *s, const char *acc) __LIBC(strpbrk);
char *strtok(char *restrict s, const char *restrict delim) __LIBC(strtok);
char *strdup(const char *s) __LIBC(strdup);
char *strndup(const char *s, size_t n) __LIBC(strndup);
char *strerror(int e) __LIBC(strerror);
#endif
