/* Launch-configuration text (see config_text.cc for the syntax). */
#ifndef RMSNORM_GPU_CONFIG_TEXT_H
#define RMSNORM_GPU_CONFIG_TEXT_H

#include "gpu/common/kernel_args.h"

/* Parses spec into *out, fields not named set to -1. 0 or -1 (syntax error). */
int rmsi_config_parse(const char *spec, rmsi_config *out);
/* Writes the canonical text of a complete config; -1 if it does not fit. */
int rmsi_config_format(const rmsi_config *c, char *buf, size_t n);

#endif /* RMSNORM_GPU_CONFIG_TEXT_H */
