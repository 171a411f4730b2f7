/*
 * Prints the C layout of the public structs (sizeof, and offsetof each field)
 * as "struct.field offset" lines, with "struct size" for the whole. The
 * Python binding's tests compare its ctypes mirrors against this, so a field
 * added to abi/rmsnorm.h without the mirror fails there.
 */
#include <stddef.h>
#include <stdio.h>

#include "rmsnorm.h"

#define SIZE(s) (void)printf("%s %zu\n", #s, sizeof(s))
#define OFF(s, f) (void)printf("%s.%s %zu\n", #s, #f, offsetof(s, f))

int main(void)
{
    SIZE(rmsnorm_matrix);
    OFF(rmsnorm_matrix, data);
    OFF(rmsnorm_matrix, dtype);
    OFF(rmsnorm_matrix, rows);
    OFF(rmsnorm_matrix, cols);
    OFF(rmsnorm_matrix, row_stride);

    SIZE(rmsnorm_forward_args);
    OFF(rmsnorm_forward_args, struct_size);
    OFF(rmsnorm_forward_args, x);
    OFF(rmsnorm_forward_args, residual);
    OFF(rmsnorm_forward_args, h_out);
    OFF(rmsnorm_forward_args, weight);
    OFF(rmsnorm_forward_args, weight_dtype);
    OFF(rmsnorm_forward_args, weight_offset);
    OFF(rmsnorm_forward_args, eps);
    OFF(rmsnorm_forward_args, flags);
    OFF(rmsnorm_forward_args, y);
    OFF(rmsnorm_forward_args, rstd);
    OFF(rmsnorm_forward_args, quant_mode);
    OFF(rmsnorm_forward_args, scale_ub);
    OFF(rmsnorm_forward_args, q);
    OFF(rmsnorm_forward_args, scale);

    SIZE(rmsnorm_backward_args);
    OFF(rmsnorm_backward_args, struct_size);
    OFF(rmsnorm_backward_args, dy);
    OFF(rmsnorm_backward_args, x);
    OFF(rmsnorm_backward_args, weight);
    OFF(rmsnorm_backward_args, weight_dtype);
    OFF(rmsnorm_backward_args, weight_offset);
    OFF(rmsnorm_backward_args, rstd);
    OFF(rmsnorm_backward_args, eps);
    OFF(rmsnorm_backward_args, flags);
    OFF(rmsnorm_backward_args, dx);
    OFF(rmsnorm_backward_args, dresidual);
    OFF(rmsnorm_backward_args, dweight);
    OFF(rmsnorm_backward_args, workspace);
    OFF(rmsnorm_backward_args, workspace_bytes);
    return 0;
}
