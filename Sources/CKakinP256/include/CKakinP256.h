#ifndef CKAKIN_P256_H
#define CKAKIN_P256_H

#include <stddef.h>
#include <stdint.h>

/// ECDSA P-256 verification against a public key whose multiples were computed in advance.
///
/// A general verification computes u1·G + u2·Q, and the multiple of the public key Q costs most
/// of it: 256 doublings, because Q is new each time. A server verifies millions of signatures
/// made by the same few keys, so for a key it keeps, every multiple d·2^(8i)·Q (i < 32,
/// 0 < d < 256) is computed once, in affine coordinates, and any u·Q is then the sum of at most
/// 32 of them. The generator gets the same table. Everything here handles public data only and
/// is not constant time.

/// How many 64-bit words one key's table holds (32 × 255 points of two coordinates).
size_t kakin_p256_table_words(void);

/// Fills `table` (`kakin_p256_table_words()` words) for the public key `xy`: the uncompressed
/// point without its prefix, X then Y, 32 bytes each, big-endian. Returns 1, or 0 when `xy` is
/// not a point of the curve (nothing usable is written then).
int kakin_p256_table_build(const uint8_t xy[64], uint64_t *table);

/// Checks an ECDSA signature `rs` (R then S, 32 bytes each, big-endian) over the 32-byte message
/// hash `digest`, for the key of `key_table`, with `generator_table` the table of the curve's
/// generator. Returns 1 when the signature is valid, 0 when it is not, and -1 when an addition
/// met a case the short formulas do not cover (equal or opposite points): the caller decides
/// with a general implementation then.
int kakin_p256_verify(
    const uint64_t *generator_table, const uint64_t *key_table, const uint8_t digest[32], const uint8_t rs[64]);

/// Checks the inverse modulo the group order that verification uses: 1 when a·a⁻¹ ≡ 1 (mod n)
/// for `a` (32 bytes, big-endian), 0 when not, -1 when `a` is 0 or not below n. For tests.
int kakin_p256_check_inverse(const uint8_t a[32]);

#endif
