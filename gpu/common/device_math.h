/*
 * Device-side numerics shared by every kernel: storage conversions, the fp8
 * encoders, the dynamic scale rule and 16-byte vector access. Each function
 * mirrors ref/formats.h bit for bit where docs/numerics.md asks for bit
 * exactness (h, fp8 codes, the scale rule); IEEE-rounded intrinsics
 * (__fadd_rn, __fdiv_rn, __fsqrt_rn) pin the operations whose rounding the
 * contract names, so -use_fast_math or FMA contraction cannot change them.
 */
#ifndef RMSNORM_GPU_DEVICE_MATH_H
#define RMSNORM_GPU_DEVICE_MATH_H

#include "gpu/common/vendor.h"
#include "gpu/common/kernel_args.h"

/* Storage types: 16-bit formats travel as raw bits so that no vendor type
 * (and none of its implicit conversions) appears in a kernel. */
struct rmsi_bf16 { uint16_t bits; };
struct rmsi_f16 { uint16_t bits; };

__device__ __forceinline__ float rmsi_d_bf16_to_f32(uint32_t b)
{
    return __uint_as_float(b << 16);
}

__device__ __forceinline__ uint32_t rmsi_d_f32_to_bf16(float f)
{
    uint32_t x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return ((x >> 16) | 0x40u) & 0xffffu; /* quiet NaN, sign kept (as ref) */
    x += 0x7fffu + ((x >> 16) & 1u);
    return x >> 16;
}

__device__ __forceinline__ uint32_t rmsi_d_f32_to_f16(float f)
{
    uint32_t x = __float_as_uint(f);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* the hardware makes a canonical NaN; ref keeps payload bits */
        return ((x >> 16) & 0x8000u) | 0x7e00u | ((ax >> 13) & 0x3ffu);
    return rmsi_f16_from_f32_hw(f);
}

/* Element traits: load one element as fp32, round fp32 to the format. */
template <typename T> struct rmsi_elem;
template <> struct rmsi_elem<float> {
    typedef uint32_t raw;
    __device__ static __forceinline__ float load(const float *p) { return *p; }
    __device__ static __forceinline__ void store(float *p, float v) { *p = v; }
    __device__ static __forceinline__ float round(float v) { return v; }
    __device__ static __forceinline__ float from_raw(uint32_t r) { return __uint_as_float(r); }
    __device__ static __forceinline__ uint32_t to_raw(float v) { return __float_as_uint(v); }
};
template <> struct rmsi_elem<rmsi_bf16> {
    typedef uint16_t raw;
    __device__ static __forceinline__ float load(const rmsi_bf16 *p) { return rmsi_d_bf16_to_f32(p->bits); }
    __device__ static __forceinline__ void store(rmsi_bf16 *p, float v) { p->bits = (uint16_t)rmsi_d_f32_to_bf16(v); }
    __device__ static __forceinline__ float round(float v) { return rmsi_d_bf16_to_f32(rmsi_d_f32_to_bf16(v)); }
    __device__ static __forceinline__ float from_raw(uint32_t r) { return rmsi_d_bf16_to_f32(r); }
    __device__ static __forceinline__ uint32_t to_raw(float v) { return rmsi_d_f32_to_bf16(v); }
};
template <> struct rmsi_elem<rmsi_f16> {
    typedef uint16_t raw;
    __device__ static __forceinline__ float load(const rmsi_f16 *p) { return rmsi_f16_to_f32_hw(p->bits); }
    __device__ static __forceinline__ void store(rmsi_f16 *p, float v) { p->bits = (uint16_t)rmsi_d_f32_to_f16(v); }
    __device__ static __forceinline__ float round(float v) { return rmsi_f16_to_f32_hw((uint16_t)rmsi_d_f32_to_f16(v)); }
    __device__ static __forceinline__ float from_raw(uint32_t r) { return rmsi_f16_to_f32_hw((uint16_t)r); }
    __device__ static __forceinline__ uint32_t to_raw(float v) { return rmsi_d_f32_to_f16(v); }
};

/* N contiguous elements of T <-> fp32. N * sizeof(T) is 16 or 32 bytes on the
 * vector path (pointer 16-byte aligned; the caller checked) and N == 1 on the
 * narrow path. Words are unpacked little-endian: element 2k is the low half. */
template <typename T, int N> struct rmsi_vec {
    __device__ static __forceinline__ void load(const T *p, float *out)
    {
        if (N * sizeof(T) >= 16) {
            const uint4 *q = reinterpret_cast<const uint4 *>(p);
#pragma unroll
            for (int c = 0; c < (int)(N * sizeof(T) / 16); c++) {
                uint4 u = q[c];
                uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    if (sizeof(T) == 4) {
                        out[c * 4 + k] = __uint_as_float(w[k]);
                    } else {
                        out[c * 8 + 2 * k] = rmsi_elem<T>::from_raw(w[k] & 0xffffu);
                        out[c * 8 + 2 * k + 1] = rmsi_elem<T>::from_raw(w[k] >> 16);
                    }
                }
            }
        } else {
#pragma unroll
            for (int e = 0; e < N; e++)
                out[e] = rmsi_elem<T>::load(p + e);
        }
    }
    __device__ static __forceinline__ void store(T *p, const float *in)
    {
        if (N * sizeof(T) >= 16) {
            uint4 *q = reinterpret_cast<uint4 *>(p);
#pragma unroll
            for (int c = 0; c < (int)(N * sizeof(T) / 16); c++) {
                uint32_t w[4];
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    if (sizeof(T) == 4)
                        w[k] = __float_as_uint(in[c * 4 + k]);
                    else
                        w[k] = rmsi_elem<T>::to_raw(in[c * 8 + 2 * k]) |
                               (rmsi_elem<T>::to_raw(in[c * 8 + 2 * k + 1]) << 16);
                }
                q[c] = make_uint4(w[0], w[1], w[2], w[3]);
            }
        } else {
#pragma unroll
            for (int e = 0; e < N; e++)
                rmsi_elem<T>::store(p + e, in[e]);
        }
    }
};

/* One 16-byte vector of T <-> 16 / sizeof(T) floats. The register-cached
 * kernels keep inputs packed (4 registers per vector) until they are used. */
template <typename T>
__device__ __forceinline__ void rmsi_unpack16(uint4 u, float *out)
{
    uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (sizeof(T) == 4) {
            out[k] = __uint_as_float(w[k]);
        } else {
            out[2 * k] = rmsi_elem<T>::from_raw(w[k] & 0xffffu);
            out[2 * k + 1] = rmsi_elem<T>::from_raw(w[k] >> 16);
        }
    }
}

#if RMSI_HAVE_HW_PACK2
template <typename T> __device__ __forceinline__ uint32_t rmsi_hw_pack2(float lo, float hi);
template <> __device__ __forceinline__ uint32_t rmsi_hw_pack2<rmsi_bf16>(float lo, float hi)
{
    return rmsi_bf16x2_hw(lo, hi);
}
template <> __device__ __forceinline__ uint32_t rmsi_hw_pack2<rmsi_f16>(float lo, float hi)
{
    return rmsi_f16x2_hw(lo, hi);
}
#endif

#if RMSI_HAVE_HW_PACK2
template <typename T> __device__ __forceinline__ uint32_t rmsi_add0x2(uint32_t a);
template <> __device__ __forceinline__ uint32_t rmsi_add0x2<rmsi_bf16>(uint32_t a)
{
    return rmsi_bf16x2_add0(a);
}
template <> __device__ __forceinline__ uint32_t rmsi_add0x2<rmsi_f16>(uint32_t a)
{
    return rmsi_f16x2_add0(a);
}
#endif

template <typename T>
__device__ __forceinline__ uint4 rmsi_pack16_soft(const float *in)
{
    uint32_t w[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (sizeof(T) == 4)
            w[k] = __float_as_uint(in[k]);
        else
            w[k] = rmsi_elem<T>::to_raw(in[2 * k]) | (rmsi_elem<T>::to_raw(in[2 * k + 1]) << 16);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

/* 16-bit vectors are rounded by the pair instructions, and only a vector
 * holding a NaN (its sum is then NaN; an overflowing sum may send a finite
 * vector here too, which is merely slower) takes the exact software path,
 * which keeps the NaN's sign and payload as ref/formats.h does. The software
 * rounding was most of the forward's instructions (ncu: 75% SM throughput at
 * 32768x8192 bf16, docs/perf/h200.md). */
template <typename T>
__device__ __forceinline__ uint4 rmsi_pack16(const float *in)
{
#if RMSI_HAVE_HW_PACK2
    if constexpr (sizeof(T) == 2) {
        const float probe = ((in[0] + in[1]) + (in[2] + in[3])) + ((in[4] + in[5]) + (in[6] + in[7]));
        if (probe == probe) {
            uint32_t w[4];
#pragma unroll
            for (int k = 0; k < 4; k++)
                w[k] = rmsi_hw_pack2<T>(in[2 * k], in[2 * k + 1]);
            return make_uint4(w[0], w[1], w[2], w[3]);
        }
    }
#endif
    return rmsi_pack16_soft<T>(in);
}

/* rmsi_pack16 for values that an FMUL or FADD produced (y = n * w, n = h *
 * rstd, h = x + r) or that are already of T: without the NaN probe. An
 * NVIDIA FMUL or FADD returns the one canonical NaN, 0x7fffffff, which the
 * pair instruction and the exact rounding both turn into 0x7fff, so the
 * probe could only ever choose between equal bits (gpu/cuda/test_math.cu
 * checks every NaN operand on the device, and rounding by rmsi_round_prod
 * before the pack; docs/perf/h200.md S26-1). Its pair loop repeats
 * rmsi_pack16's on purpose: routing rmsi_pack16 through a shared helper,
 * even one holding only the loop, reordered the SASS of 34 measured
 * register-path kernels (session 26, cuobjdump). */
template <typename T>
__device__ __forceinline__ uint4 rmsi_pack16_prod(const float *in)
{
#if RMSI_HAVE_HW_PACK2
    if constexpr (sizeof(T) == 2) {
        uint32_t w[4];
#pragma unroll
        for (int k = 0; k < 4; k++)
            w[k] = rmsi_hw_pack2<T>(in[2 * k], in[2 * k + 1]);
        return make_uint4(w[0], w[1], w[2], w[3]);
    }
#endif
    return rmsi_pack16_soft<T>(in);
}

/* v rounded to T in place (ROUND_LLAMA's round_T(h * rstd), the fused
 * add's round_T(x + r)), for FMUL and FADD results as rmsi_pack16_prod: by
 * the pair instructions and back. */
template <typename T, int N>
__device__ __forceinline__ void rmsi_round_prod(float *v)
{
    if constexpr (sizeof(T) == 2) {
#pragma unroll
        for (int e = 0; e < N; e += 2) {
#if RMSI_HAVE_HW_PACK2
            const uint32_t w = rmsi_hw_pack2<T>(v[e], v[e + 1]);
            v[e] = rmsi_elem<T>::from_raw(w & 0xffffu);
            v[e + 1] = rmsi_elem<T>::from_raw(w >> 16);
#else
            v[e] = rmsi_elem<T>::round(v[e]);
            v[e + 1] = rmsi_elem<T>::round(v[e + 1]);
#endif
        }
    }
}

/* Element e of a packed 16-byte vector of T, for unrolled loops (e a
 * constant): a kernel reads its inputs element by element from the packed
 * registers instead of unpacking whole vectors into live float arrays. */
template <typename T>
__device__ __forceinline__ float rmsi_elem16(const uint4 &u, int e)
{
    constexpr int EPW = 4 / (int)sizeof(T); /* elements per 32-bit word */
    const int j = e / EPW;
    const uint32_t w = j == 0 ? u.x : (j == 1 ? u.y : (j == 2 ? u.z : u.w));
    if (sizeof(T) == 4)
        return __uint_as_float(w);
    return rmsi_elem<T>::from_raw((e % EPW) ? (w >> 16) : (w & 0xffffu));
}

/* Weight vector chunks: VEC elements of W are 16 or 32 bytes. */
template <typename T, typename W> struct rmsi_wchunks {
    static constexpr int n = (16 / (int)sizeof(T)) * (int)sizeof(W) / 16;
};

template <typename T, typename W>
__device__ __forceinline__ void rmsi_weff_unpack(const uint4 *wa, float off, float *wf)
{
    constexpr int VEC = 16 / (int)sizeof(T);
    if (sizeof(W) == sizeof(T)) {
        rmsi_unpack16<W>(wa[0], wf);
    } else { /* fp32 weights next to 16-bit activations: two chunks */
        rmsi_unpack16<float>(wa[0], wf);
        rmsi_unpack16<float>(wa[1], wf + 4);
    }
#pragma unroll
    for (int e = 0; e < VEC; e++)
        wf[e] += off;
}

/* A row of T addressed by (base, row, stride). */
template <typename T>
__device__ __forceinline__ T *rmsi_row(void *base, int64_t row, int64_t stride)
{
    return reinterpret_cast<T *>(base) + row * stride;
}
template <typename T>
__device__ __forceinline__ const T *rmsi_crow(const void *base, int64_t row, int64_t stride)
{
    return reinterpret_cast<const T *>(base) + row * stride;
}

/* The multi-pass loops take RMSI_MULTI_U vectors a thread a step, all loaded
 * before the first is used: one at a time left a thread one load in flight
 * (S22-4, H200, bf16, against one a step: forward 512x262144 262 -> 236 us,
 * 2048x65536 261 -> 247, fused add 512x262144 440 -> 370; backward
 * 8192x16384 418 -> 391; forward 4096x32768 231 -> 238, slower; wide rows
 * stay near half the HBM rate, docs/perf/h200.md). Vector i of a thread is
 * still t + k * nt in k order, so the sums keep the unbatched loop's order
 * and bits. The vectors stay packed until used (rmsi_mvec); four a step
 * spilled under the 64 registers of a 1024-thread CTA, unpacked or not. */
#if RMSI_WARP == 64
/* HIP (wave64) keeps one vector a step: batched, gfx942's multi-pass kernels
 * went from 49-62 to 98-112 VGPRs (7 -> 4 waves; `ninja hip-check`), a trade
 * that no AMD GPU here can measure (as with the block quantiser, S11). */
#define RMSI_MULTI_U 1
#else
#define RMSI_MULTI_U 2
#endif

/* Vector i of a row, +0 past the row's nvec vectors: 16 bytes held as loaded,
 * or (VEC = 1, the narrow path) the one element. */
template <typename T, int VEC> struct rmsi_mvec {
    static constexpr bool PK = VEC * sizeof(T) == 16;
    uint4 u;
    float f;
    __device__ __forceinline__ void load(const void *base, int64_t row, int64_t ld, int64_t i, int64_t nvec)
    {
        u = make_uint4(0u, 0u, 0u, 0u);
        f = 0.0f;
        if (i < nvec) {
            if constexpr (PK)
                u = *reinterpret_cast<const uint4 *>(rmsi_crow<T>(base, row, ld) + i * VEC);
            else
                rmsi_vec<T, 1>::load(rmsi_crow<T>(base, row, ld) + i, &f);
        }
    }
    /* the same through an L2 policy (rmsi_l2_policy), 16-byte vectors only */
    __device__ __forceinline__ void load_pol(const void *base, int64_t row, int64_t ld, int64_t i, int64_t nvec,
                                             uint64_t pol)
    {
        if constexpr (PK) {
            u = make_uint4(0u, 0u, 0u, 0u);
            f = 0.0f;
            if (i < nvec)
                u = rmsi_ld_policy(reinterpret_cast<const uint4 *>(rmsi_crow<T>(base, row, ld) + i * VEC), pol);
        } else {
            (void)pol;
            load(base, row, ld, i, nvec);
        }
    }
    __device__ __forceinline__ void get(float *out) const
    {
        if constexpr (PK)
            rmsi_unpack16<T>(u, out);
        else
            out[0] = f;
    }
};

/* N vectors i0, i0 + nt, ... of a row, every load issued before any use;
 * _n2: of two rows (x and dy), their loads interleaved. */
template <typename T, int VEC, int N>
__device__ __forceinline__ void rmsi_mvec_load_n(rmsi_mvec<T, VEC> (&v)[N], const void *base, int64_t row,
                                                 int64_t ld, int64_t i0, int nt, int64_t nvec)
{
#pragma unroll
    for (int u = 0; u < N; u++)
        v[u].load(base, row, ld, i0 + (int64_t)u * nt, nvec);
}

template <typename T, int VEC, int N>
__device__ __forceinline__ void rmsi_mvec_load_n2(rmsi_mvec<T, VEC> (&a)[N], rmsi_mvec<T, VEC> (&b)[N], const void *pa,
                                                  int64_t lda, const void *pb, int64_t ldb, int64_t row, int64_t i0,
                                                  int nt, int64_t nvec)
{
#pragma unroll
    for (int u = 0; u < N; u++) {
        a[u].load(pa, row, lda, i0 + (int64_t)u * nt, nvec);
        b[u].load(pb, row, ldb, i0 + (int64_t)u * nt, nvec);
    }
}

/* NV 16-byte vectors t, t + tpr, ... of one row: all loads issued before any
 * use (forward x / residual, backward x / dy). Zero past the
 * row (a branch rather than `on ? load : zero`, and a function rather than a
 * lambda: with either, clang keeps the arrays in scratch on AMD,
 * docs/perf/amd-isa.md). */
template <int NV>
__device__ __forceinline__ void rmsi_load_vecs(const uint4 *src, bool live, int t, int tpr, int nvec, int cache,
                                              uint4 (&v)[NV])
{
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const int i = t + k * tpr;
        v[k] = make_uint4(0u, 0u, 0u, 0u);
        if (live && i < nvec)
            v[k] = cache ? rmsi_ld_stream(src + i) : src[i];
    }
}

/* ---- fp8 ---------------------------------------------------------------- */

/* The portable encoder: ref/formats.h rmsi_f32_to_fp8 in integer form. The
 * quantum 2^(E - mbits) is applied as a multiplication by an exact power of two,
 * so k = rint(a * 2^(mbits - E)) is the reference's nearbyintf(a / quantum). */
__device__ __forceinline__ uint32_t rmsi_fp8_soft(float v, int fmt)
{
    const int mbits = fmt == RMSI_FP8_E5M2 ? 2 : 3;
    const int bias = fmt == RMSI_FP8_E5M2 ? 15 : (fmt == RMSI_FP8_E4M3FNUZ ? 8 : 7);
    const float fmax = fmt == RMSI_FP8_E5M2 ? 57344.0f : (fmt == RMSI_FP8_E4M3FNUZ ? 240.0f : 448.0f);
    const uint32_t max_code = fmt == RMSI_FP8_E5M2 ? 0x7bu : (fmt == RMSI_FP8_E4M3FNUZ ? 0x7fu : 0x7eu);
    const int fnuz = fmt == RMSI_FP8_E4M3FNUZ;
    uint32_t bits = __float_as_uint(v);
    uint32_t sign = (bits >> 24) & 0x80u;
    float a = fabsf(v);
    uint32_t code;
    if (a != a)
        return fnuz ? 0x80u : (sign | (fmt == RMSI_FP8_E5M2 ? 0x7eu : 0x7fu));
    if (a >= fmax) {
        code = max_code;
    } else {
        int E = (int)((__float_as_uint(a) >> 23) & 0xffu) - 127;
        const int emin = 1 - bias;
        if (E < emin) /* also a == 0 and fp32 subnormals */
            E = emin;
        float k_f = rintf(a * __uint_as_float((uint32_t)(127 + mbits - E) << 23));
        uint32_t k = (uint32_t)k_f;
        uint32_t one = 1u << mbits;
        if (k < one) {
            code = k;
        } else {
            if (k >= 2u * one) {
                k >>= 1;
                E++;
            }
            code = ((uint32_t)(E + bias) << mbits) | (k - one);
            if (code > max_code)
                code = max_code;
        }
    }
    if (fnuz && code == 0u)
        return 0u;
    return sign | code;
}

__device__ __forceinline__ uint32_t rmsi_fp8_encode(float v, int fmt)
{
#if RMSI_HAVE_HW_FP8
    if (fmt != RMSI_FP8_E4M3FNUZ) {
        if (v != v) /* keep the sign, as the reference does */
            return ((__float_as_uint(v) >> 24) & 0x80u) | (fmt == RMSI_FP8_E5M2 ? 0x7eu : 0x7fu);
        return fmt == RMSI_FP8_E5M2 ? rmsi_hw_fp8_e5m2(v) : rmsi_hw_fp8_e4m3(v);
    }
#endif
    return rmsi_fp8_soft(v, fmt);
}

/* a / b for the quantiser's two divisions, amax / fmax and 1 / s: b a
 * normal fp32 and a / b either normal or below the dynamic scale's floor (so
 * clamped), a and b finite. On CUDA this is __fdiv_rn's own fast path (a
 * reciprocal refined by one Newton step, then the quotient corrected by its
 * exact fma residual) without the range check (FCHK) that guards it and the
 * call to the slow path behind that check: in these ranges the check never
 * fires, and a call is a scheduling barrier, which serialised the NV vectors'
 * scale chains in the block quantiser. gpu/cuda/test_math.cu checks every
 * operand of both domains bit for bit against __fdiv_rn on the device. HIP's
 * __fdiv_rn has no call (v_div_scale / v_div_fmas / v_div_fixup): kept. */
__device__ __forceinline__ float rmsi_d_div_inrange(float a, float b)
{
#if RMSI_HAVE_RCP_APPROX
    float y = rmsi_rcp_approx(b);
    y = fmaf(y, fmaf(-b, y, 1.0f), y);
    const float q = a * y;
    return fmaf(y, fmaf(-b, q, a), q);
#else
    return __fdiv_rn(a, b);
#endif
}

/* 1 / s of a dynamic scale: s >= 1 / (fmax * 512) and at most FLT_MAX / 240
 * rounded up to a power of two (2^121), so 1 / s is normal; or +inf, whose
 * reciprocal is 0 as __fdiv_rn's (never NaN: amax ignores NaN). */
__device__ __forceinline__ float rmsi_d_scale_recip(float s)
{
    return isfinite(s) ? rmsi_d_div_inrange(1.0f, s) : 0.0f;
}

/* ref/formats.h rmsi_dynamic_scale, same operations in the same order. lo is
 * its 1 / (fmax * 512), which depends on the format only: the host computes
 * it once (rmsi_fwd_params.s_min) instead of every call dividing again. The
 * quotient is correctly rounded (rmsi_d_div_inrange; where it would be
 * subnormal it is below lo and replaced). */
__device__ __forceinline__ float rmsi_d_dynamic_scale(float amax, float ub, float fmax, float lo, int pow2)
{
    float a = (ub > 0.0f && amax > ub) ? ub : amax;
    float s = isfinite(a) ? rmsi_d_div_inrange(a, fmax) : a;
    if (!(s >= lo))
        s = lo;
    if (pow2 && isfinite(s)) {
        uint32_t b = __float_as_uint(s);
        if ((b & 0x7fffffu) != 0u) /* not a power of two: the next one up */
            s = __uint_as_float((b & 0x7f800000u) + 0x800000u);
    }
    return s;
}

/* 1 / sqrt(ss / cols + eps), correctly rounded at each step. */
__device__ __forceinline__ float rmsi_d_rstd(float ss, int64_t cols, float eps)
{
    return __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(__fdiv_rn(ss, (float)cols), eps)));
}

/* Store N fp8 codes packed little-endian in words (element 4k + j in byte j
 * of w[k]): N == 8 one 8-byte store, N == 4 one 4-byte store, else bytes. */
template <int N>
__device__ __forceinline__ void rmsi_store_codes(uint8_t *p, const uint32_t *w)
{
    if constexpr (N == 8) {
        *reinterpret_cast<uint2 *>(p) = make_uint2(w[0], w[1]);
    } else if constexpr (N == 4) {
        *reinterpret_cast<uint32_t *>(p) = w[0];
    } else {
#pragma unroll
        for (int e = 0; e < N; e++)
            p[e] = (uint8_t)(w[e / 4] >> (8 * (e % 4)));
    }
}

#if RMSI_HAVE_HW_FP8X4
/* The codes of N (a multiple of 4) values q of an OCP format (E4M3 or E5M2)
 * in pairs, false (w unset) when q holds a NaN: as rmsi_pack16, a NaN makes
 * the vector's sum NaN (inf - inf sends a NaN-free vector to the exact path
 * too, merely slower), and the exact path keeps the NaN's sign. prod: q are
 * FMUL results, so a NaN among them is 0x7fffffff, which the E4M3 pair
 * instruction encodes as the exact path does (0x7f; gpu/cuda/test_math.cu
 * checks it on the device): no probe for E4M3. E5M2's pair instruction
 * gives its NaN another code than the reference's. The E4M3 loop is written
 * out for prod: guarding the probe instead reordered the 16 measured lean
 * block-quant kernels (sm_90a, session 27), which were not timed that way. */
template <int N>
__device__ __forceinline__ bool rmsi_fp8_hw_pack(const float *q, int fmt, uint32_t *w, bool prod)
{
    if (prod && fmt == RMSI_FP8_E4M3) {
#pragma unroll
        for (int j = 0; j < N / 4; j++)
            w[j] = rmsi_hw_fp8x4<false>(q[4 * j], q[4 * j + 1], q[4 * j + 2], q[4 * j + 3]);
        return true;
    }
    float probe = (q[0] + q[1]) + (q[2] + q[3]);
#pragma unroll
    for (int e = 4; e < N; e += 4)
        probe += (q[e] + q[e + 1]) + (q[e + 2] + q[e + 3]);
    if (probe != probe)
        return false;
    if (fmt == RMSI_FP8_E5M2) {
#pragma unroll
        for (int j = 0; j < N / 4; j++)
            w[j] = rmsi_hw_fp8x4<true>(q[4 * j], q[4 * j + 1], q[4 * j + 2], q[4 * j + 3]);
    } else {
#pragma unroll
        for (int j = 0; j < N / 4; j++)
            w[j] = rmsi_hw_fp8x4<false>(q[4 * j], q[4 * j + 1], q[4 * j + 2], q[4 * j + 3]);
    }
    return true;
}
#endif

/* fp8 codes of v / s for N consecutive elements, stored at dst; recip: of
 * v * (1 / s) instead (the dynamic scales of rmsi_fwd_reg, see there).
 * With the pair conversions the division mode and the format are decided
 * once a vector and the element loops have no branch: from the block amax
 * shuffles to the code store, rmsi_fwd_reg<bf16, bf16, NV, Q, R> ran 187
 * (NV = 2) / 181 (NV = 4) SASS instructions a vector with the per-element
 * path (a BSSY/BSYNC chain each), 87 / 86 with this one. The per-element path
 * stays for NaN vectors, FNUZ, sm_80 and HIP; there each quotient is encoded
 * as soon as it is made (holding all N cost gfx942 a wave of occupancy in the
 * NV = 2 kernels, docs/perf/amd-isa.md). PROD: E4M3 codes of v * (1 / s)
 * without the NaN probe (rmsi_fp8_hw_pack's prod), for the lean kernel; the
 * register path's fp8 kernels keep it (without it the f16 one of one vector
 * a thread spilled under its register cap). */
template <int N, bool PROD = false>
__device__ __forceinline__ void rmsi_fp8_quant(const float *v, float s, bool recip, int fmt, uint8_t *dst)
{
    const float inv = recip ? rmsi_d_scale_recip(s) : 0.0f;
    uint32_t w[(N + 3) / 4];
#if RMSI_HAVE_HW_FP8X4
    if constexpr (N % 4 == 0) {
        if (fmt != RMSI_FP8_E4M3FNUZ) {
            float q[N];
            if (recip) {
#pragma unroll
                for (int e = 0; e < N; e++)
                    q[e] = v[e] * inv;
            } else {
#pragma unroll
                for (int e = 0; e < N; e++)
                    q[e] = __fdiv_rn(v[e], s);
            }
            if (!rmsi_fp8_hw_pack<N>(q, fmt, w, PROD && recip)) {
#pragma unroll
                for (int j = 0; j < N / 4; j++)
                    w[j] = 0u;
#pragma unroll
                for (int e = 0; e < N; e++)
                    w[e / 4] |= rmsi_fp8_encode(q[e], fmt) << (8 * (e % 4));
            }
            rmsi_store_codes<N>(dst, w);
            return;
        }
    }
#endif
#pragma unroll
    for (int j = 0; j < (N + 3) / 4; j++)
        w[j] = 0u;
#pragma unroll
    for (int e = 0; e < N; e++)
        w[e / 4] |= rmsi_fp8_encode(recip ? v[e] * inv : __fdiv_rn(v[e], s), fmt) << (8 * (e % 4));
    rmsi_store_codes<N>(dst, w);
}

#endif /* RMSNORM_GPU_DEVICE_MATH_H */
