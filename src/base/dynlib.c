/* One loader for the libraries mcpgw opens at first use (see gw/dynlib.h). */
#include "gw/dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "gw/util.h"

int gw_dynlib_open(const struct gw_dynlib *lib, void *table, void **handle, char *why, size_t cap)
{
    *handle = NULL;
    void *h = dlopen(lib->soname, RTLD_NOW | lib->flags);
    if (h == NULL) {
        gw_say(why, cap, "cannot load %s, which %s: %s", lib->soname, lib->needed_by, dlerror());
        return -ENOTSUP;
    }
    /* Every name is looked up before the table is written, so a library
     * that lacks one leaves the caller's table as it was. */
    for (size_t i = 0; i < lib->nsyms; i++) {
        if (dlsym(h, lib->syms[i].name) == NULL) {
            gw_say(why, cap, "%s has no %s (%s)", lib->soname, lib->syms[i].name, lib->version);
            dlclose(h);
            return -ENOTSUP;
        }
    }
    for (size_t i = 0; i < lib->nsyms; i++) {
        void *p = dlsym(h, lib->syms[i].name);
        /* POSIX guarantees a dlsym() result converts to a function pointer. */
        memcpy((char *)table + lib->syms[i].offset, &p, sizeof(p));
    }
    *handle = h;
    return 0;
}
