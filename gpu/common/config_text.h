/* Launch-configuration text (see config_text.cc for the syntax). */
#ifndef RMSNORM_GPU_CONFIG_TEXT_H
#define RMSNORM_GPU_CONFIG_TEXT_H

#include "gpu/common/kernel_args.h"
#include "rmsnorm_backend.h"

/* test_ladder formats every enumerated config into RMSI_CONFIG_TEXT bytes:
 * so each fits the size the ABI promises callers of config_describe and
 * config_enumerate (rmsnorm-bench's 64 bytes failed silently, S19) */
static_assert(RMSI_CONFIG_TEXT <= RMSNORM_CONFIG_TEXT_MAX, "config text longer than the ABI's bound");

/* Parses spec into *out, fields not named set to -1. 0 or -1 (syntax error). */
int rmsi_config_parse(const char *spec, rmsi_config *out);
/* A whole string as a decimal in the knobs' range, 0..2^20 (the plugins'
 * numeric environment overrides): 0, or -1 (NULL, empty, not a number). */
int rmsi_parse_count(const char *s, int *out);
/* Writes the canonical text of a complete config; -1 if it does not fit. */
int rmsi_config_format(const rmsi_config *c, char *buf, size_t n);

#endif /* RMSNORM_GPU_CONFIG_TEXT_H */
