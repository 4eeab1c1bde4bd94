/* SPDX-License-Identifier: BSD-3-Clause */
/* SIMD kernels of the built-in Philox4x32-10 generator fused with the
 * uniform and Box-Muller transforms (rng_simd.c). Private to lib/rng. */
#ifndef DPDO_RNG_SIMD_H
#define DPDO_RNG_SIMD_H

#include <stddef.h>
#include <stdint.h>

/* The best kernel this CPU runs (DPDO__RNG_KERNEL_*), from
 * __builtin_cpu_supports; scalar on other architectures. */
int dpdo__simd_best(void);

/* Blocks ctr[0], ctr[0]+1, ... (mod 2^32) of stream (ctr[1..3]) under key
 * key[0..1]: handles the largest multiple of the kernel's width not above
 * nblocks and returns how many blocks it handled (0 for the scalar kernel).
 * Normals: block j -> out[2j], out[2j+1] (add: out[i] = fma(scale, z, out[i])).
 * Uniforms: block j -> out[2j] = u(w0,w1), out[2j+1] = u(w2,w3). */
size_t dpdo__simd_normals(int kernel, const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                          double *out, int add, double scale);
size_t dpdo__simd_uniforms(int kernel, const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                           double *out);

/* Raw words: block j -> out[4j .. 4j+3], the words of dpdo__philox4x32_10 (AVX-512 only: 0
 * handled on other kernels; same contract on the multiple handled). */
size_t dpdo__simd_blocks(int kernel, const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                         uint32_t *out);

/* dpdo__bm_block on m blocks of words w (normals, or add: out[i] =
 * fma(scale, z, out[i])) compiled for FMA; returns 0 without doing anything
 * if the CPU lacks FMA (or off x86), else 1. Same bits as the portable loop. */
int dpdo__simd_bm_blocks(const uint32_t *w, size_t m, double *out, int add, double scale);

#endif /* DPDO_RNG_SIMD_H */
