/* SPDX-License-Identifier: BSD-3-Clause */
/* Vectorised Philox4x32-10 + uniform / Box-Muller (AVX2+FMA and AVX-512F).
 *
 * Each function is compiled for its instruction set with a target attribute
 * and chosen at run time (dpdo__simd_best), so one binary runs on any x86-64.
 * Layout: one 64-bit lane per block; a lane holds a 32-bit Philox word in its
 * low half (the high half may hold garbage between rounds: _mul_epu32 reads
 * only the low half, and the words are cleaned when they are turned into
 * doubles). AVX2 handles 4 blocks (8 normals) per step, AVX-512 8 blocks.
 *
 * BIT-IDENTITY: every floating-point step below is the same IEEE operation,
 * with the same operands in the same order, as the scalar reference in
 * rng_math.h (dpdo__u01, dpdo__log, dpdo__sincos2pi, dpdo__bm_block); only
 * fma is fused, exactly where the scalar code calls fma(). Integer steps are
 * exact. tests/test_rng.c compares the kernels bit for bit. */
#include <stddef.h>
#include <stdint.h>

#include "rng_impl.h"
#include "rng_math.h"
#include "rng_simd.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DPDO_HAVE_X86_SIMD 1
#include <immintrin.h>
#endif

#ifdef DPDO_HAVE_X86_SIMD

int dpdo__simd_best(void)
{
    /* __builtin_cpu_supports reads libgcc's CPU model, which libgcc's own
     * constructor fills before any user code runs (so no __builtin_cpu_init
     * and no state of ours); it includes the OS support check (XSAVE). */
    if (__builtin_cpu_supports("avx512f")) return DPDO__RNG_KERNEL_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return DPDO__RNG_KERNEL_AVX2;
    return DPDO__RNG_KERNEL_SCALAR;
}

/* ======================= AVX-512F: 8 blocks per step ======================= */
#define T512 __attribute__((target("avx512f")))

/* The high half of each 64-bit product moved to the low half by a dword
 * swap (a shuffle, which runs on another port than the multiplier and the
 * shifts; the garbage it leaves in the high half is harmless). */
#define HI512(p) _mm512_shuffle_epi32((p), _MM_PERM_CDAB)

/* G independent groups of 8 blocks, interleaved round by round. */
#define PG 4
T512 static inline void philox512g(__m512i c[PG][4], const __m512i k0[10], const __m512i k1[10])
{
    const __m512i m0 = _mm512_set1_epi64(DPDO__PHILOX_M0);
    const __m512i m1 = _mm512_set1_epi64(DPDO__PHILOX_M1);
#pragma GCC unroll 10
    for (int r = 0; r < 10; r++) {
#pragma GCC unroll 4
        for (int g = 0; g < PG; g++) {
            __m512i p0 = _mm512_mul_epu32(c[g][0], m0);
            __m512i p1 = _mm512_mul_epu32(c[g][2], m1);
            c[g][0] = _mm512_ternarylogic_epi64(HI512(p1), c[g][1], k0[r], 0x96);
            c[g][1] = p1;
            /* one shift (port 0) and one shuffle (port 5) balance the ports */
            c[g][2] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), c[g][3], k1[r], 0x96);
            c[g][3] = p0;
        }
    }
}

/* The 64-bit word lo | hi << 32 from the low halves of two lanes: one
 * dword permute. */
T512 static inline __m512i word512(__m512i lo, __m512i hi)
{
    const __m512i idx = _mm512_set_epi32(30, 14, 28, 12, 26, 10, 24, 8, 22, 6, 20, 4, 18, 2, 16, 0);
    return _mm512_permutex2var_epi32(lo, idx, hi);
}

/* dpdo__u01 of a 64-bit word */
T512 static inline __m512d u01_512(__m512i x)
{
    __m512i b = _mm512_or_si512(_mm512_srli_epi64(x, 12), _mm512_set1_epi64(0x3FF0000000000000ll));
    return _mm512_sub_pd(_mm512_castsi512_pd(b), _mm512_set1_pd(DPDO__ONE_MINUS_HALF_ULP));
}

T512 static inline __m512d log512(__m512d x)
{
    /* getexp / getmant give the same exact e and m in [1,2) as the bit
     * manipulation of the scalar code, in one instruction each */
    __m512d dk = _mm512_getexp_pd(x);
    __m512d m = _mm512_getmant_pd(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src);
    __mmask8 big = _mm512_cmp_pd_mask(m, _mm512_set1_pd(DPDO__SQRT2), _CMP_GT_OQ);
    m = _mm512_mask_mul_pd(m, big, m, _mm512_set1_pd(0.5));
    dk = _mm512_mask_add_pd(dk, big, dk, _mm512_set1_pd(1.0));
    __m512d f = _mm512_sub_pd(m, _mm512_set1_pd(1.0));
    __m512d s = _mm512_div_pd(f, _mm512_add_pd(_mm512_set1_pd(2.0), f));
    __m512d z = _mm512_mul_pd(s, s);
    __m512d p = _mm512_set1_pd(DPDO__LG7);
    p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(DPDO__LG6));
    p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(DPDO__LG5));
    p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(DPDO__LG4));
    p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(DPDO__LG3));
    p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(DPDO__LG2));
    p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(DPDO__LG1));
    __m512d R = _mm512_mul_pd(p, z);
    __m512d logm = _mm512_sub_pd(f, _mm512_mul_pd(s, _mm512_sub_pd(f, R)));
    __m512d lo = _mm512_add_pd(logm, _mm512_mul_pd(dk, _mm512_set1_pd(DPDO__LN2_LO)));
    return _mm512_add_pd(_mm512_mul_pd(dk, _mm512_set1_pd(DPDO__LN2_HI)), lo);
}

/* dpdo__angle */
T512 static inline void angle512(__m512i x, __m512d *sn, __m512d *cs)
{
    __m512i rb = _mm512_or_si512(_mm512_srli_epi64(x, 12), _mm512_set1_epi64(0x3FF0000000000000ll));
    __m512d a = _mm512_mul_pd(_mm512_sub_pd(_mm512_castsi512_pd(rb), _mm512_set1_pd(1.5)),
                              _mm512_set1_pd(DPDO__PIO2));
    __m512d z = _mm512_mul_pd(a, a);
    __m512d ps = _mm512_set1_pd(DPDO__S6);
    ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(DPDO__S5));
    ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(DPDO__S4));
    ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(DPDO__S3));
    ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(DPDO__S2));
    ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(DPDO__S1));
    __m512d sv = _mm512_fmadd_pd(_mm512_mul_pd(a, z), ps, a);
    __m512d pc = _mm512_set1_pd(DPDO__C6);
    pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(DPDO__C5));
    pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(DPDO__C4));
    pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(DPDO__C3));
    pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(DPDO__C2));
    pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(DPDO__C1));
    __m512d cv = _mm512_fmadd_pd(_mm512_mul_pd(z, z), pc,
                                 _mm512_fmadd_pd(z, _mm512_set1_pd(-0.5), _mm512_set1_pd(1.0)));
    const __m512i one = _mm512_set1_epi64(1), sign = _mm512_set1_epi64((long long)0x8000000000000000ull);
    __mmask8 odd = _mm512_test_epi64_mask(x, one);
    __m512d c = _mm512_mask_blend_pd(odd, cv, sv);
    __m512d s = _mm512_mask_blend_pd(odd, sv, cv);
    /* 0x78 = a ^ (b & c) */
    *cs = _mm512_castsi512_pd(_mm512_ternarylogic_epi64(
        _mm512_castpd_si512(c), _mm512_slli_epi64(_mm512_add_epi64(x, one), 62), sign, 0x78));
    *sn = _mm512_castsi512_pd(
        _mm512_ternarylogic_epi64(_mm512_castpd_si512(s), _mm512_slli_epi64(x, 62), sign, 0x78));
}

T512 static void keys512(const uint32_t key[4], __m512i k0[10], __m512i k1[10])
{
    uint32_t a = key[0], b = key[1];
    for (int r = 0; r < 10; r++) {
        k0[r] = _mm512_set1_epi64(a);
        k1[r] = _mm512_set1_epi64(b);
        a += DPDO__PHILOX_W0;
        b += DPDO__PHILOX_W1;
    }
}

/* Why the shape below: one group of 8 blocks is a long dependency chain
 * (~200 cycles: 10 multiply rounds, a division, a square root, two
 * polynomials), so the kernel interleaves PG groups in the Philox rounds and
 * software-pipelines the integer part (Philox of unit t) with the
 * floating-point part (transform of unit t-1), which the out-of-order core
 * then overlaps. */

T512 static size_t normals512(const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                              double *out, int add, double scale)
{
    __m512i k0[10], k1[10];
    keys512(key, k0, k1);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i m32 = _mm512_set1_epi64(0xFFFFFFFFll);
    const __m512i c1 = _mm512_set1_epi64(ctr[1]), c2 = _mm512_set1_epi64(ctr[2]),
                  c3 = _mm512_set1_epi64(ctr[3]);
    const __m512i ilo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
    const __m512i ihi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    const __m512d sc = _mm512_set1_pd(scale);
    /* Software pipeline over units of 8*PG blocks: iteration t generates the
     * words of unit t (integer ports) while it transforms unit t-1 (FP ports
     * and the divider); the two halves are independent, so the out-of-order
     * core overlaps them. u1/u2 pass through a two-slot L1 buffer. */
    enum { U = 8 * PG };
    double ub1[2][U] __attribute__((aligned(64)));
    double ub2[2][U] __attribute__((aligned(64)));
    size_t nb = nblocks & ~(size_t)(U - 1);
    size_t nu = nb / U;
    uint64_t base = ctr[0];
    for (size_t t = 0; t <= nu; t++) {
        if (t < nu) {
            __m512i c[PG][4];
            double *d1 = ub1[t & 1], *d2 = ub2[t & 1];
#pragma GCC unroll 4
            for (int g = 0; g < PG; g++) {
                c[g][0] = _mm512_and_si512(
                    _mm512_add_epi64(_mm512_set1_epi64((long long)(base + 8 * (uint64_t)g)), lane), m32);
                c[g][1] = c1, c[g][2] = c2, c[g][3] = c3;
            }
            base += U;
            philox512g(c, k0, k1);
#pragma GCC unroll 4
            for (int g = 0; g < PG; g++) {
                _mm512_store_pd(d1 + 8 * g, u01_512(word512(c[g][0], c[g][1])));
                _mm512_store_si512((void *)(d2 + 8 * g), word512(c[g][2], c[g][3]));
            }
        }
        if (t > 0) {
            const double *s1 = ub1[(t - 1) & 1], *s2 = ub2[(t - 1) & 1];
            double *o = out + 2 * U * (t - 1);
            for (int g = 0; g < PG; g++, o += 16) {
                __m512d u1 = _mm512_load_pd(s1 + 8 * g);
                __m512d rho = _mm512_sqrt_pd(_mm512_mul_pd(_mm512_set1_pd(-2.0), log512(u1)));
                __m512d sn, cs;
                angle512(_mm512_load_si512((const void *)(s2 + 8 * g)), &sn, &cs);
                __m512d z0 = _mm512_mul_pd(rho, cs);
                __m512d z1 = _mm512_mul_pd(rho, sn);
                __m512d a = _mm512_permutex2var_pd(z0, ilo, z1);
                __m512d b = _mm512_permutex2var_pd(z0, ihi, z1);
                if (add) {
                    a = _mm512_add_pd(_mm512_loadu_pd(o), _mm512_mul_pd(sc, a));
                    b = _mm512_add_pd(_mm512_loadu_pd(o + 8), _mm512_mul_pd(sc, b));
                }
                _mm512_storeu_pd(o, a);
                _mm512_storeu_pd(o + 8, b);
            }
        }
    }
    return nb;
}

T512 static size_t uniforms512(const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                               double *out)
{
    __m512i k0[10], k1[10];
    keys512(key, k0, k1);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i m32 = _mm512_set1_epi64(0xFFFFFFFFll);
    const __m512i c1 = _mm512_set1_epi64(ctr[1]), c2 = _mm512_set1_epi64(ctr[2]),
                  c3 = _mm512_set1_epi64(ctr[3]);
    const __m512i ilo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
    const __m512i ihi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    size_t nb = nblocks & ~(size_t)(8 * PG - 1);
    uint64_t base = ctr[0];
    for (size_t j = 0; j < nb; j += 8 * PG, base += 8 * PG) {
        __m512i c[PG][4];
#pragma GCC unroll 4
        for (int g = 0; g < PG; g++) {
            c[g][0] = _mm512_and_si512(
                _mm512_add_epi64(_mm512_set1_epi64((long long)(base + 8 * (uint64_t)g)), lane), m32);
            c[g][1] = c1, c[g][2] = c2, c[g][3] = c3;
        }
        philox512g(c, k0, k1);
#pragma GCC unroll 4
        for (int g = 0; g < PG; g++) {
            __m512d u1 = u01_512(word512(c[g][0], c[g][1]));
            __m512d u2 = u01_512(word512(c[g][2], c[g][3]));
            double *o = out + 2 * (j + 8 * (size_t)g);
            _mm512_storeu_pd(o, _mm512_permutex2var_pd(u1, ilo, u2));
            _mm512_storeu_pd(o + 8, _mm512_permutex2var_pd(u1, ihi, u2));
        }
    }
    return nb;
}

/* ======================= AVX2 + FMA: 4 blocks per step ====================== */
#define T256 __attribute__((target("avx2,fma")))

/* G independent groups of 4 blocks, interleaved round by round. */
T256 static inline void philox256g(__m256i c[PG][4], const uint32_t key[4])
{
    const __m256i m0 = _mm256_set1_epi64x(DPDO__PHILOX_M0);
    const __m256i m1 = _mm256_set1_epi64x(DPDO__PHILOX_M1);
    uint32_t ka = key[0], kb = key[1];
    for (int r = 0; r < 10; r++) {
        const __m256i k0 = _mm256_set1_epi64x(ka), k1 = _mm256_set1_epi64x(kb);
#pragma GCC unroll 4
        for (int g = 0; g < PG; g++) {
            __m256i p0 = _mm256_mul_epu32(c[g][0], m0);
            __m256i p1 = _mm256_mul_epu32(c[g][2], m1);
            c[g][0] = _mm256_xor_si256(_mm256_xor_si256(_mm256_shuffle_epi32(p1, 0xB1), c[g][1]), k0);
            c[g][1] = p1;
            c[g][2] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c[g][3]), k1);
            c[g][3] = p0;
        }
        ka += DPDO__PHILOX_W0;
        kb += DPDO__PHILOX_W1;
    }
}

T256 static inline __m256i word256(__m256i lo, __m256i hi)
{
    return _mm256_blend_epi32(lo, _mm256_slli_epi64(hi, 32), 0xAA);
}

T256 static inline __m256d u01_256(__m256i x)
{
    __m256i b = _mm256_or_si256(_mm256_srli_epi64(x, 12), _mm256_set1_epi64x(0x3FF0000000000000ll));
    return _mm256_sub_pd(_mm256_castsi256_pd(b), _mm256_set1_pd(DPDO__ONE_MINUS_HALF_ULP));
}

T256 static inline __m256d log256(__m256d x)
{
    __m256i b = _mm256_castpd_si256(x);
    __m256d dk = _mm256_sub_pd(
        _mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(b, 52),
                                            _mm256_set1_epi64x(0x4330000000000000ll))),
        _mm256_set1_pd(DPDO__MAGIC52 + 1023.0));
    __m256d m = _mm256_castsi256_pd(
        _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi64x(0x000FFFFFFFFFFFFFll)),
                        _mm256_set1_epi64x(0x3FF0000000000000ll)));
    __m256d big = _mm256_cmp_pd(m, _mm256_set1_pd(DPDO__SQRT2), _CMP_GT_OQ);
    m = _mm256_blendv_pd(m, _mm256_mul_pd(m, _mm256_set1_pd(0.5)), big);
    dk = _mm256_blendv_pd(dk, _mm256_add_pd(dk, _mm256_set1_pd(1.0)), big);
    __m256d f = _mm256_sub_pd(m, _mm256_set1_pd(1.0));
    __m256d s = _mm256_div_pd(f, _mm256_add_pd(_mm256_set1_pd(2.0), f));
    __m256d z = _mm256_mul_pd(s, s);
    __m256d p = _mm256_set1_pd(DPDO__LG7);
    p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(DPDO__LG6));
    p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(DPDO__LG5));
    p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(DPDO__LG4));
    p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(DPDO__LG3));
    p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(DPDO__LG2));
    p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(DPDO__LG1));
    __m256d R = _mm256_mul_pd(p, z);
    __m256d logm = _mm256_sub_pd(f, _mm256_mul_pd(s, _mm256_sub_pd(f, R)));
    __m256d lo = _mm256_add_pd(logm, _mm256_mul_pd(dk, _mm256_set1_pd(DPDO__LN2_LO)));
    return _mm256_add_pd(_mm256_mul_pd(dk, _mm256_set1_pd(DPDO__LN2_HI)), lo);
}

T256 static inline void angle256(__m256i x, __m256d *sn, __m256d *cs)
{
    __m256i rb = _mm256_or_si256(_mm256_srli_epi64(x, 12), _mm256_set1_epi64x(0x3FF0000000000000ll));
    __m256d a = _mm256_mul_pd(_mm256_sub_pd(_mm256_castsi256_pd(rb), _mm256_set1_pd(1.5)),
                              _mm256_set1_pd(DPDO__PIO2));
    __m256d z = _mm256_mul_pd(a, a);
    __m256d ps = _mm256_set1_pd(DPDO__S6);
    ps = _mm256_fmadd_pd(ps, z, _mm256_set1_pd(DPDO__S5));
    ps = _mm256_fmadd_pd(ps, z, _mm256_set1_pd(DPDO__S4));
    ps = _mm256_fmadd_pd(ps, z, _mm256_set1_pd(DPDO__S3));
    ps = _mm256_fmadd_pd(ps, z, _mm256_set1_pd(DPDO__S2));
    ps = _mm256_fmadd_pd(ps, z, _mm256_set1_pd(DPDO__S1));
    __m256d sv = _mm256_fmadd_pd(_mm256_mul_pd(a, z), ps, a);
    __m256d pc = _mm256_set1_pd(DPDO__C6);
    pc = _mm256_fmadd_pd(pc, z, _mm256_set1_pd(DPDO__C5));
    pc = _mm256_fmadd_pd(pc, z, _mm256_set1_pd(DPDO__C4));
    pc = _mm256_fmadd_pd(pc, z, _mm256_set1_pd(DPDO__C3));
    pc = _mm256_fmadd_pd(pc, z, _mm256_set1_pd(DPDO__C2));
    pc = _mm256_fmadd_pd(pc, z, _mm256_set1_pd(DPDO__C1));
    __m256d cv = _mm256_fmadd_pd(_mm256_mul_pd(z, z), pc,
                                 _mm256_fmadd_pd(z, _mm256_set1_pd(-0.5), _mm256_set1_pd(1.0)));
    const __m256i one = _mm256_set1_epi64x(1);
    const __m256i sign = _mm256_set1_epi64x((long long)0x8000000000000000ull);
    __m256d odd = _mm256_castsi256_pd(_mm256_slli_epi64(x, 63)); /* sign bit = q & 1 */
    __m256d c = _mm256_blendv_pd(cv, sv, odd);
    __m256d s = _mm256_blendv_pd(sv, cv, odd);
    __m256i negc = _mm256_and_si256(_mm256_slli_epi64(_mm256_add_epi64(x, one), 62), sign);
    __m256i negs = _mm256_and_si256(_mm256_slli_epi64(x, 62), sign);
    *cs = _mm256_castsi256_pd(_mm256_xor_si256(_mm256_castpd_si256(c), negc));
    *sn = _mm256_castsi256_pd(_mm256_xor_si256(_mm256_castpd_si256(s), negs));
}

/* [a0 a1 a2 a3], [b0 b1 b2 b3] -> [a0 b0 a1 b1], [a2 b2 a3 b3] */
T256 static inline void interleave256(__m256d a, __m256d b, __m256d *lo, __m256d *hi)
{
    __m256d l = _mm256_unpacklo_pd(a, b); /* a0 b0 a2 b2 */
    __m256d h = _mm256_unpackhi_pd(a, b); /* a1 b1 a3 b3 */
    *lo = _mm256_permute2f128_pd(l, h, 0x20);
    *hi = _mm256_permute2f128_pd(l, h, 0x31);
}

T256 static size_t normals256(const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                              double *out, int add, double scale)
{
    /* same software pipeline as normals512, units of 4*PG blocks */
    enum { U = 4 * PG };
    const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
    const __m256i m32 = _mm256_set1_epi64x(0xFFFFFFFFll);
    const __m256i c1 = _mm256_set1_epi64x(ctr[1]), c2 = _mm256_set1_epi64x(ctr[2]),
                  c3 = _mm256_set1_epi64x(ctr[3]);
    const __m256d sc = _mm256_set1_pd(scale);
    double ub1[2][U] __attribute__((aligned(32)));
    double ub2[2][U] __attribute__((aligned(32)));
    size_t nb = nblocks & ~(size_t)(U - 1);
    size_t nu = nb / U;
    uint64_t base = ctr[0];
    for (size_t t = 0; t <= nu; t++) {
        if (t < nu) {
            __m256i c[PG][4];
            double *d1 = ub1[t & 1], *d2 = ub2[t & 1];
#pragma GCC unroll 4
            for (int g = 0; g < PG; g++) {
                c[g][0] = _mm256_and_si256(
                    _mm256_add_epi64(_mm256_set1_epi64x((long long)(base + 4 * (uint64_t)g)), lane), m32);
                c[g][1] = c1, c[g][2] = c2, c[g][3] = c3;
            }
            base += U;
            philox256g(c, key);
#pragma GCC unroll 4
            for (int g = 0; g < PG; g++) {
                _mm256_store_pd(d1 + 4 * g, u01_256(word256(c[g][0], c[g][1])));
                _mm256_store_si256((__m256i *)(void *)(d2 + 4 * g), word256(c[g][2], c[g][3]));
            }
        }
        if (t > 0) {
            const double *s1 = ub1[(t - 1) & 1], *s2 = ub2[(t - 1) & 1];
            double *o = out + 2 * U * (t - 1);
            for (int g = 0; g < PG; g++, o += 8) {
                __m256d u1 = _mm256_load_pd(s1 + 4 * g);
                __m256d rho = _mm256_sqrt_pd(_mm256_mul_pd(_mm256_set1_pd(-2.0), log256(u1)));
                __m256d sn, cs, a, b;
                angle256(_mm256_load_si256((const __m256i *)(const void *)(s2 + 4 * g)), &sn, &cs);
                interleave256(_mm256_mul_pd(rho, cs), _mm256_mul_pd(rho, sn), &a, &b);
                if (add) {
                    a = _mm256_add_pd(_mm256_loadu_pd(o), _mm256_mul_pd(sc, a));
                    b = _mm256_add_pd(_mm256_loadu_pd(o + 4), _mm256_mul_pd(sc, b));
                }
                _mm256_storeu_pd(o, a);
                _mm256_storeu_pd(o + 4, b);
            }
        }
    }
    return nb;
}

T256 static size_t uniforms256(const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                               double *out)
{
    const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
    const __m256i m32 = _mm256_set1_epi64x(0xFFFFFFFFll);
    const __m256i c1 = _mm256_set1_epi64x(ctr[1]), c2 = _mm256_set1_epi64x(ctr[2]),
                  c3 = _mm256_set1_epi64x(ctr[3]);
    size_t nb = nblocks & ~(size_t)(4 * PG - 1);
    uint64_t base = ctr[0];
    for (size_t j = 0; j < nb; j += 4 * PG, base += 4 * PG) {
        __m256i c[PG][4];
#pragma GCC unroll 4
        for (int g = 0; g < PG; g++) {
            c[g][0] = _mm256_and_si256(
                _mm256_add_epi64(_mm256_set1_epi64x((long long)(base + 4 * (uint64_t)g)), lane), m32);
            c[g][1] = c1, c[g][2] = c2, c[g][3] = c3;
        }
        philox256g(c, key);
#pragma GCC unroll 4
        for (int g = 0; g < PG; g++) {
            __m256d a, b;
            interleave256(u01_256(word256(c[g][0], c[g][1])), u01_256(word256(c[g][2], c[g][3])),
                          &a, &b);
            double *o = out + 2 * (j + 4 * (size_t)g);
            _mm256_storeu_pd(o, a);
            _mm256_storeu_pd(o + 4, b);
        }
    }
    return nb;
}

size_t dpdo__simd_normals(int kernel, const uint32_t key[4], const uint32_t ctr[4],
                          size_t nblocks, double *out, int add, double scale)
{
    if (kernel == DPDO__RNG_KERNEL_AVX512) return normals512(key, ctr, nblocks, out, add, scale);
    if (kernel == DPDO__RNG_KERNEL_AVX2) return normals256(key, ctr, nblocks, out, add, scale);
    return 0;
}

size_t dpdo__simd_uniforms(int kernel, const uint32_t key[4], const uint32_t ctr[4],
                           size_t nblocks, double *out)
{
    if (kernel == DPDO__RNG_KERNEL_AVX512) return uniforms512(key, ctr, nblocks, out);
    if (kernel == DPDO__RNG_KERNEL_AVX2) return uniforms256(key, ctr, nblocks, out);
    return 0;
}

#else /* no x86 SIMD: the scalar kernel only */

int dpdo__simd_best(void) { return DPDO__RNG_KERNEL_SCALAR; }

size_t dpdo__simd_normals(int kernel, const uint32_t key[4], const uint32_t ctr[4],
                          size_t nblocks, double *out, int add, double scale)
{
    (void)kernel, (void)key, (void)ctr, (void)nblocks, (void)out, (void)add, (void)scale;
    return 0;
}

size_t dpdo__simd_uniforms(int kernel, const uint32_t key[4], const uint32_t ctr[4],
                           size_t nblocks, double *out)
{
    (void)kernel, (void)key, (void)ctr, (void)nblocks, (void)out;
    return 0;
}

#endif
