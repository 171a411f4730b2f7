/*
 * fp8 output quantisation of the reference forward: the amax scan and the
 * divide-and-convert step. The scale rule itself is rmsi_dynamic_scale in
 * ref/formats.h, shared with the other backends and the tests.
 */
#include <math.h>

#include "internal.h"
#include "ref/formats.h"
#include "ref/ref.h"

float rmsi_ref_amax(const float *v, size_t n, float amax)
{
    size_t i;

    for (i = 0; i < n; i++)
        amax = fmaxf(amax, fabsf(v[i]));
    return amax;
}

void rmsi_ref_quantize(const float *v, size_t n, float s, rmsnorm_dtype qt, uint8_t *q)
{
    size_t i;

    /* Divide, not multiply by 1/s: vLLM and SGLang divide, and a reciprocal
     * would change some codes near rounding ties. */
    for (i = 0; i < n; i++)
        q[i] = rmsi_f32_to_fp8(v[i] / s, qt);
}
