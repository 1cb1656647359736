/* Shared libraries loaded at first use: libcurl (HTTP upstreams, the auth
 * CLI), libwebsockets (WebSocket upstreams) and libcrypto (private_key_jwt)
 * are not linked, so a daemon that needs none of them maps none of them
 * (docs/performance.md, idle RSS). Each user keeps a table of function
 * pointers and names its symbols; this module opens the library and fills
 * the table, all or nothing. */
#ifndef GW_DYNLIB_H
#define GW_DYNLIB_H

#include <stddef.h>

/* A function the table needs: its name in the library and the offset of
 * its field in the table. */
struct gw_dynsym {
    const char *name;
    size_t offset;
};

/* What a failure says: "cannot load <soname>, which <needed_by>: <dlerror>"
 * or "<soname> has no <symbol> (<version>)". */
struct gw_dynlib {
    const char *soname;
    int flags;             /* RTLD_LOCAL or RTLD_GLOBAL; RTLD_NOW is added */
    const char *needed_by; /* "HTTP upstreams need (Debian package libcurl4)" */
    const char *version;   /* "libcurl 7.85 or later is needed" */
    const struct gw_dynsym *syms;
    size_t nsyms;
};

/* Opens `lib` and fills `table` with its functions. Returns 0 and stores
 * the handle in *handle, or -ENOTSUP with the reason in `why`; the table
 * is left untouched then and nothing stays mapped. */
int gw_dynlib_open(const struct gw_dynlib *lib, void *table, void **handle, char *why, size_t cap);

#endif
