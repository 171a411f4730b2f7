/* Discovery internals shared by dispatch.c, plugin.c and api.c. */
#ifndef RMSNORM_ABI_DISPATCH_H
#define RMSNORM_ABI_DISPATCH_H

#include <stddef.h>

#include "internal.h"

/* The slots up to and including synchronize are required in every table. */
#define RMSI_REQUIRED_TABLE_SIZE \
    (offsetof(rmsnorm_backend, synchronize) + sizeof(((rmsnorm_backend *)0)->synchronize))

/* An optional slot, or NULL when the backend's table is too old to have it. */
#define RMSI_SLOT(be, field) \
    ((be)->struct_size >= offsetof(rmsnorm_backend, field) + sizeof((be)->field) ? (be)->field : NULL)

void rmsi_backends_init(void);
int rmsi_debug_enabled(void);
/* Logs one line on stderr when RMSNORM_DEBUG is set. */
void rmsi_log(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
int rmsi_table_usable(const rmsnorm_backend *be);

/* dlopen()s librmsnorm_<name>.so from RMSNORM_PLUGIN_PATH, the core library's
 * directory or its rmsnorm/ subfolder; NULL when absent or refused. */
const rmsnorm_backend *rmsi_plugin_load(const char *name);

#endif
