/*
 * AVX-512 vector helpers of the simd backend: loads and stores of 16 elements
 * of each activation dtype as fp32 lanes, the exact roundings to f16/bf16 and
 * the exact fp32 -> fp8 encoder. Included only by simd/ kernel files, which
 * simd/simd.ninja compiles with the AVX-512 flags.
 *
 * Every helper is bit-identical to its scalar twin in ref/formats.h; the
 * throwaway exhaustive checks (all 2^32 fp32 inputs) are described in
 * docs/perf/cpu.md.
 */
#ifndef RMSNORM_SIMD_VEC_H
#define RMSNORM_SIMD_VEC_H

#ifndef __AVX512F__
#error "simd/vec.h needs the AVX-512 flags that simd/simd.ninja gives simd/ kernel files"
#endif

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "rmsnorm.h"

#define RMSI_INLINE static inline __attribute__((always_inline))

/* Lanes per fp32 vector. */
#define RMSI_VL 16

/* The first n (1..16) lanes. */
RMSI_INLINE __mmask16 rmsi_vmask(int64_t n)
{
    return (__mmask16)((1u << (unsigned)n) - 1u);
}

RMSI_INLINE size_t rmsi_vsize(rmsnorm_dtype t)
{
    return t == RMSNORM_F32 ? 4u : 2u;
}

/* 16 elements of dtype t at p (element index 0), widened exactly to fp32. */
RMSI_INLINE __m512 rmsi_vload(const void *p, rmsnorm_dtype t)
{
    switch (t) {
    case RMSNORM_F16:
        return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
    case RMSNORM_BF16:
        return _mm512_castsi512_ps(
            _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
    case RMSNORM_F32:
    default:
        return _mm512_loadu_ps(p);
    }
}

/* The same for the lanes in m; masked-off lanes read as 0 and their memory is
 * never touched (AVX-512 masked loads suppress faults). */
RMSI_INLINE __m512 rmsi_vload_m(const void *p, rmsnorm_dtype t, __mmask16 m)
{
    switch (t) {
    case RMSNORM_F16:
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
    case RMSNORM_BF16:
        return _mm512_castsi512_ps(
            _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
    case RMSNORM_F32:
    default:
        return _mm512_maskz_loadu_ps(m, p);
    }
}

/* fp32 -> bf16 bits (in the low half of each 32-bit lane), RNE with the
 * integer trick of ref/formats.h: add 0x7fff plus the lsb of the kept half,
 * NaN made quiet with its sign and top payload kept. */
RMSI_INLINE __m512i rmsi_bf16_bits_int(__m512 v)
{
    const __m512i u = _mm512_castps_si512(v);
    const __m512i hi = _mm512_srli_epi32(u, 16);
    const __m512i lsb = _mm512_and_si512(hi, _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_or_epi32(r, nan, hi, _mm512_set1_epi32(0x40));
}

/* fp32 -> 16 bf16 values. hw != 0 (the function carries the avx512bf16
 * target): VCVTNEPS2BF16 is RNE with the same NaN rule, but it treats fp32
 * subnormal inputs as zero, so a vector holding one takes the integer path. */
RMSI_INLINE __m256i rmsi_bf16_pack(__m512 v, int hw)
{
#ifdef __AVX512BF16__
    if (hw) {
        const __mmask16 sub = _mm512_fpclass_ps_mask(v, 0x20); /* denormal */
        if (__builtin_expect(sub == 0, 1))
            return (__m256i)_mm512_cvtneps_pbh(v);
    }
#else
    (void)hw;
#endif
    return _mm512_cvtepi32_epi16(rmsi_bf16_bits_int(v));
}

/* v rounded to t (RNE) and widened back: round_T of docs/numerics.md. */
RMSI_INLINE __m512 rmsi_vround(__m512 v, rmsnorm_dtype t, int hw)
{
    switch (t) {
    case RMSNORM_F16:
        return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    case RMSNORM_BF16:
        (void)hw; /* the widening needs the bits in the high half: the integer form is shorter */
        return _mm512_castsi512_ps(_mm512_slli_epi32(rmsi_bf16_bits_int(v), 16));
    case RMSNORM_F32:
    default:
        return v;
    }
}

/* How a vector of outputs reaches memory. */
enum { RMSI_ST_PLAIN = 0, RMSI_ST_NT = 1 };

/* Stores 16 fp32 lanes rounded to t. nt: a non-temporal store, p must then be
 * aligned to the vector's byte size (64 for f32, 32 for 16-bit types). */
RMSI_INLINE void rmsi_vstore(void *p, __m512 v, rmsnorm_dtype t, int hw, int nt)
{
    switch (t) {
    case RMSNORM_F16: {
        const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if (nt)
            _mm256_stream_si256((__m256i *)p, h);
        else
            _mm256_storeu_si256((__m256i *)p, h);
        break;
    }
    case RMSNORM_BF16: {
        const __m256i h = rmsi_bf16_pack(v, hw);
        if (nt)
            _mm256_stream_si256((__m256i *)p, h);
        else
            _mm256_storeu_si256((__m256i *)p, h);
        break;
    }
    case RMSNORM_F32:
    default:
        if (nt)
            _mm512_stream_ps((float *)p, v);
        else
            _mm512_storeu_ps(p, v);
        break;
    }
}

/* Masked store of the lanes in m; memory outside them is never touched. */
RMSI_INLINE void rmsi_vstore_m(void *p, __m512 v, rmsnorm_dtype t, int hw, __mmask16 m)
{
    switch (t) {
    case RMSNORM_F16:
        _mm256_mask_storeu_epi16(p, m,
                                 _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        break;
    case RMSNORM_BF16:
        _mm256_mask_storeu_epi16(p, m, rmsi_bf16_pack(v, hw));
        break;
    case RMSNORM_F32:
    default:
        _mm512_mask_storeu_ps(p, m, v);
        break;
    }
}

/*
 * bf16 in even/odd form: 32 bf16 in one zmm widen to fp32 as the even
 * elements (a shift) and the odd elements (a mask), two in-lane operations
 * where the ordered widening needs two lane-crossing VPMOVZXWD and two shifts;
 * the pack back is one VCVTNE2PS2BF16 and one VPERMW. The kernels that use it
 * sum in this lane order (fixed by cols alone) and compute elementwise.
 */
typedef __mmask32 rmsi_mask32;

/* The first n (1..32) 16-bit lanes. */
RMSI_INLINE rmsi_mask32 rmsi_vmask32(int64_t n)
{
    return (rmsi_mask32)((1ull << (unsigned)n) - 1u);
}

RMSI_INLINE void rmsi_bf16_eo(__m512i v, __m512 *e, __m512 *o)
{
    *e = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
    *o = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32((int)0xffff0000u)));
}

/* 32 bf16 at p (m: the lanes read, others 0) in even/odd form. */
RMSI_INLINE void rmsi_bf16_load_eo(const void *p, rmsi_mask32 m, int full, __m512 *e, __m512 *o)
{
    rmsi_bf16_eo(full ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi16(m, p), e, o);
}

/* 32 fp32 at p (m: the lanes read, others 0) in the even/odd form of
 * rmsi_bf16_eo: an fp32 weight beside bf16 activations. */
RMSI_INLINE void rmsi_f32_load_eo(const void *p, rmsi_mask32 m, int full, __m512 *e, __m512 *o)
{
    const float *f = (const float *)p;
    const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512 lo = full ? _mm512_loadu_ps(f) : _mm512_maskz_loadu_ps((__mmask16)(m & 0xffffu), f);
    const __m512 hi = full ? _mm512_loadu_ps(f + 16) : _mm512_maskz_loadu_ps((__mmask16)(m >> 16), f + 16);
    *e = _mm512_permutex2var_ps(lo, ie, hi);
    *o = _mm512_permutex2var_ps(lo, io, hi);
}

/* The 32 weights at column j of w, bf16 or fp32 as wk says, in even/odd form
 * (m: the lanes read, others 0). */
RMSI_INLINE void rmsi_w_load_eo(const char *w, int wk, int64_t j, rmsi_mask32 m, int full, __m512 *e,
                                __m512 *o)
{
    if (wk == RMSNORM_F32)
        rmsi_f32_load_eo(w + (size_t)j * 4u, m, full, e, o);
    else
        rmsi_bf16_load_eo(w + (size_t)j * 2u, m, full, e, o);
}

/* 32 bf16 at p in even/odd form from one load: gcc otherwise folds the load
 * into both the shift and the and, two loads of the same 64 bytes. Where rows
 * do not start on a cache line each of those loads spans two lines, and one
 * load a vector is 10-12% faster, hot or cold; on aligned rows it is 10%
 * slower cold, so rmsi_avx512_backward picks the instantiation by alignment
 * (docs/perf/cpu.md, session 39). The forward's y sweep loads its bf16
 * weights this way, since a streamed row's sweep starts at an alignment head
 * that leaves them off a line (session 42). The empty asm only keeps v in a
 * register. */
RMSI_INLINE void rmsi_bf16_load_eo1(const void *p, rmsi_mask32 m, int full, __m512 *e, __m512 *o)
{
    __m512i v = full ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi16(m, p);
    __asm__("" : "+v"(v));
    rmsi_bf16_eo(v, e, o);
}

/* Even/odd fp32 halves -> 32 bf16 in element order, RNE (rmsi_bf16_pack's
 * rules, bit for bit: a subnormal in either half takes the integer path). */
RMSI_INLINE __m512i rmsi_bf16_pack_eo(__m512 e, __m512 o, int hw)
{
#ifdef __AVX512BF16__
    if (hw) {
        /* VCVTNE2PS2BF16 flushes an fp32 subnormal to zero, so a vector whose
         * result has no zero magnitude had none: one VPTESTNMW of the result
         * instead of a VFPCLASSPS of each half. A true zero, rarer in data
         * than the test is frequent, takes the integer path too (same bits). */
        const __m512i p = (__m512i)_mm512_cvtne2ps_pbh(o, e);
        if (__builtin_expect(_mm512_testn_epi16_mask(p, _mm512_set1_epi16(0x7fff)) == 0, 1)) {
            /* words 0-15: e's, 16-31: o's; word k of the result is e[k/2] or o[k/2] */
            const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10,
                                                 25, 9, 24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3,
                                                 18, 2, 17, 1, 16, 0);
            return _mm512_permutexvar_epi16(idx, p);
        }
    }
#else
    (void)hw;
#endif
    return _mm512_mask_blend_epi16((__mmask32)0xAAAAAAAAu, rmsi_bf16_bits_int(e),
                                   _mm512_slli_epi32(rmsi_bf16_bits_int(o), 16));
}

/* Even/odd fp32 halves -> the 32 fp32 values in element order: lo gets
 * elements 0-15, hi 16-31. */
RMSI_INLINE void rmsi_eo_interleave(__m512 e, __m512 o, __m512 *lo, __m512 *hi)
{
    const __m512i il = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i ih = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9,
                                        24, 8);
    *lo = _mm512_permutex2var_ps(e, il, o);
    *hi = _mm512_permutex2var_ps(e, ih, o);
}

/* fp8 format constants as vectors' scalars (see rmsi_fp8_format in
 * ref/formats.h). */
typedef struct rmsi_fp8v {
    __m512 max;        /* largest finite value */
    __m512i mbits;     /* mantissa bits */
    __m512i emin_b;    /* biased fp32 exponent of the format's smallest normal binade */
    __m512i scale_b;   /* 254 + mbits: 2^(mbits - E) has fp32 exponent field scale_b - e */
    __m512i code_b;    /* 128 - bias: code = ((e - code_b) << mbits) + k */
    __m512i max_code;
    __m512i nan_code;  /* magnitude code of NaN; fnuz: the whole code 0x80 */
    int fnuz;
} rmsi_fp8v;

RMSI_INLINE rmsi_fp8v rmsi_fp8v_of(rmsnorm_dtype qt)
{
    rmsi_fp8v f;
    int mbits, bias, max_code, nan_code;
    float max;

    switch (qt) {
    case RMSNORM_F8_E5M2:
        mbits = 2; bias = 15; max = 57344.0f; max_code = 0x7b; nan_code = 0x7e; f.fnuz = 0;
        break;
    case RMSNORM_F8_E4M3FNUZ:
        mbits = 3; bias = 8; max = 240.0f; max_code = 0x7f; nan_code = 0x80; f.fnuz = 1;
        break;
    case RMSNORM_F8_E4M3:
    default:
        mbits = 3; bias = 7; max = 448.0f; max_code = 0x7e; nan_code = 0x7f; f.fnuz = 0;
        break;
    }
    f.max = _mm512_set1_ps(max);
    f.mbits = _mm512_set1_epi32(mbits);
    f.emin_b = _mm512_set1_epi32(1 - bias + 127);
    f.scale_b = _mm512_set1_epi32(254 + mbits);
    f.code_b = _mm512_set1_epi32(128 - bias);
    f.max_code = _mm512_set1_epi32(max_code);
    f.nan_code = _mm512_set1_epi32(nan_code);
    return f;
}

/*
 * fp32 -> fp8 codes of 16 lanes: RNE, saturation to +-max (infinities too),
 * NaN -> NaN, no -0 in fnuz. Bit-identical to rmsi_f32_to_fp8:
 *   E = max(floor(log2 |t|), emin) read from the exponent field (fp32
 *   subnormals land at emin, where they round to 0), k = RNE(|t| * 2^(mbits-E))
 *   (an exact power-of-two scaling), code = ((E + bias - 1) << mbits) + k.
 * The last form covers the subnormal codes (E = emin gives k) and a k that
 * rounded up to 2^(mbits+1) (its carry is the next binade's code).
 */
RMSI_INLINE __m128i rmsi_fp8_encode(__m512 t, const rmsi_fp8v *f)
{
    const __m512i u = _mm512_castps_si512(t);
    const __m512i au = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
    const __m512 a = _mm512_castsi512_ps(au);
    const __mmask16 nan = _mm512_cmp_ps_mask(t, t, _CMP_UNORD_Q);
    const __mmask16 big = _mm512_cmp_ps_mask(a, f->max, _CMP_GE_OQ);
    const __m512i eb = _mm512_max_epi32(_mm512_srli_epi32(au, 23), f->emin_b);
    const __m512 sc = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(f->scale_b, eb), 23));
    const __m512i k = _mm512_cvt_roundps_epi32(_mm512_mul_ps(a, sc),
                                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512i code = _mm512_add_epi32(_mm512_sllv_epi32(_mm512_sub_epi32(eb, f->code_b), f->mbits), k);
    code = _mm512_min_epi32(code, f->max_code);
    code = _mm512_mask_mov_epi32(code, big, f->max_code);
    const __m512i sign = _mm512_and_si512(_mm512_srli_epi32(u, 24), _mm512_set1_epi32(0x80));
    if (f->fnuz) {
        const __mmask16 nz = _mm512_test_epi32_mask(code, code);
        code = _mm512_mask_or_epi32(code, nz, code, sign);
        code = _mm512_mask_mov_epi32(code, nan, f->nan_code);
    } else {
        code = _mm512_or_si512(code, sign);
        code = _mm512_mask_or_epi32(code, nan, sign, f->nan_code);
    }
    return _mm512_cvtepi32_epi8(code);
}

/* Horizontal fp32 sum in a fixed order (the halving fold). */
RMSI_INLINE float rmsi_hsum(__m512 v)
{
    const __m256 a = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    const __m128 d = _mm_add_ss(c, _mm_movehdup_ps(c));
    return _mm_cvtss_f32(d);
}

/* Horizontal max (no NaN reaches it: amax vectors are built with max_ps). */
RMSI_INLINE float rmsi_hmax(__m512 v)
{
    return _mm512_reduce_max_ps(v);
}

#endif /* RMSNORM_SIMD_VEC_H */
