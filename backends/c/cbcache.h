/* cbcache.h - the compiled-bundle cache of the C backend's run path
 * ($GLOW_CBACKEND_CACHE; the why and the key are in cbcache.c). */
#ifndef GLOW_BACKENDS_C_CBCACHE_H
#define GLOW_BACKENDS_C_CBCACHE_H

#include <stdbool.h>

/* The cache entry of a bundle compiled by cmd (with the bundle's
 * directory left out of it) from the sources c_src and h_src: a malloc'd
 * path, or NULL when $GLOW_CBACKEND_CACHE is unset or empty. */
char *cbcache_path(const char *cmd, const char *c_src, const char *h_src);

/* Copies the entry (NULL: none) to the shared object so; false when there
 * is no such entry or it cannot be copied (so is then removed). */
bool cbcache_fetch(const char *entry, const char *so);

/* Keeps the compiled shared object so as the entry (NULL: nothing), whole
 * or not at all; failures are silent (the cache only saves time). */
void cbcache_store(const char *entry, const char *so);

#endif
