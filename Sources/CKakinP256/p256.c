#include "CKakinP256.h"

#include <string.h>

// Numbers are four 64-bit limbs, least significant first. Field elements (mod p) are kept in
// Montgomery form (a·2^256 mod p), always fully reduced, so equal values have equal limbs.

typedef unsigned __int128 u128;

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/// The field prime p = 2^256 − 2^224 + 2^192 + 2^96 − 1.
static const uint64_t P[4] = {0xffffffffffffffffULL, 0x00000000ffffffffULL, 0x0000000000000000ULL,
                              0xffffffff00000001ULL};
/// The group order n.
static const uint64_t N[4] = {0xf3b9cac2fc632551ULL, 0xbce6faada7179e84ULL, 0xffffffffffffffffULL,
                              0xffffffff00000000ULL};
/// −n⁻¹ mod 2^64 (for p it is 1).
static const uint64_t N0 = 0xccd1c8aaee00bc4fULL;
/// 2^512 mod p and mod n: multiplying by them enters Montgomery form.
static const uint64_t RR_P[4] = {0x0000000000000003ULL, 0xfffffffbffffffffULL, 0xfffffffffffffffeULL,
                                 0x00000004fffffffdULL};
static const uint64_t RR_N[4] = {0x83244c95be79eea2ULL, 0x4699799c49bd6fa6ULL, 0x2845b2392b6bec59ULL,
                                 0x66e12d94f3d95620ULL};
/// 1 in Montgomery form (2^256 mod p, 2^256 mod n).
static const uint64_t ONE_P[4] = {0x0000000000000001ULL, 0xffffffff00000000ULL, 0xffffffffffffffffULL,
                                  0x00000000fffffffeULL};
static const uint64_t ONE_N[4] = {0x0c46353d039cdaafULL, 0x4319055258e8617bULL, 0x0000000000000000ULL,
                                  0x00000000ffffffffULL};
/// The curve's constant b, in Montgomery form.
static const uint64_t B_MONT[4] = {0xd89cdf6229c4bddfULL, 0xacf005cd78843090ULL, 0xe5a220abf7212ed6ULL,
                                   0xdc30061d04874834ULL};

enum { WINDOWS = 32, DIGITS = 255, POINT_WORDS = 8 };

size_t kakin_p256_table_words(void) { return (size_t)WINDOWS * DIGITS * POINT_WORDS; }

// MARK: Multi-precision

ALWAYS_INLINE int is_zero(const uint64_t a[4]) { return (a[0] | a[1] | a[2] | a[3]) == 0; }

ALWAYS_INLINE int equal(const uint64_t a[4], const uint64_t b[4]) {
    return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3])) == 0;
}

/// a ≥ b.
ALWAYS_INLINE int at_least(const uint64_t a[4], const uint64_t b[4]) {
    for (int i = 3; i >= 0; i--) {
        if (a[i] != b[i]) return a[i] > b[i];
    }
    return 1;
}

/// r = a + b mod 2^256; the carry out.
ALWAYS_INLINE uint64_t add4(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    u128 t = 0;
    for (int i = 0; i < 4; i++) {
        t = (u128)a[i] + b[i] + (uint64_t)(t >> 64);
        r[i] = (uint64_t)t;
    }
    return (uint64_t)(t >> 64);
}

/// r = a − b mod 2^256; the borrow out.
ALWAYS_INLINE uint64_t sub4(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    uint64_t borrow = 0;
    for (int i = 0; i < 4; i++) {
        u128 t = (u128)a[i] - b[i] - borrow;
        r[i] = (uint64_t)t;
        borrow = (uint64_t)(t >> 64) & 1;
    }
    return borrow;
}

/// Big-endian 32 bytes to limbs.
static void from_bytes(uint64_t r[4], const uint8_t bytes[32]) {
    for (int i = 0; i < 4; i++) {
        uint64_t limb = 0;
        for (int j = 0; j < 8; j++) limb = (limb << 8) | bytes[(3 - i) * 8 + j];
        r[i] = limb;
    }
}

/// r = a·b·2^−256 mod m, for a, b < m (coarsely integrated operand scanning), fully reduced.
ALWAYS_INLINE void mont_mul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4], const uint64_t m[4],
                            uint64_t m0) {
    uint64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t bi = b[i];
        u128 c = (u128)a[0] * bi + t0;
        t0 = (uint64_t)c;
        c = (u128)a[1] * bi + t1 + (uint64_t)(c >> 64);
        t1 = (uint64_t)c;
        c = (u128)a[2] * bi + t2 + (uint64_t)(c >> 64);
        t2 = (uint64_t)c;
        c = (u128)a[3] * bi + t3 + (uint64_t)(c >> 64);
        t3 = (uint64_t)c;
        c = (u128)t4 + (uint64_t)(c >> 64);
        t4 = (uint64_t)c;
        uint64_t t5 = (uint64_t)(c >> 64);

        uint64_t q = t0 * m0;
        c = (u128)q * m[0] + t0;
        c = (u128)q * m[1] + t1 + (uint64_t)(c >> 64);
        t0 = (uint64_t)c;
        c = (u128)q * m[2] + t2 + (uint64_t)(c >> 64);
        t1 = (uint64_t)c;
        c = (u128)q * m[3] + t3 + (uint64_t)(c >> 64);
        t2 = (uint64_t)c;
        c = (u128)t4 + (uint64_t)(c >> 64);
        t3 = (uint64_t)c;
        t4 = t5 + (uint64_t)(c >> 64);
    }
    uint64_t t[4] = {t0, t1, t2, t3};
    uint64_t s[4];
    uint64_t borrow = sub4(s, t, m);
    if (t4 || !borrow) {
        memcpy(r, s, sizeof s);
    } else {
        memcpy(r, t, sizeof t);
    }
}

// MARK: The field

ALWAYS_INLINE void fmul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) { mont_mul(r, a, b, P, 1); }

ALWAYS_INLINE void fsqr(uint64_t r[4], const uint64_t a[4]) { mont_mul(r, a, a, P, 1); }

ALWAYS_INLINE void fadd(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    uint64_t carry = add4(r, a, b);
    uint64_t s[4];
    uint64_t borrow = sub4(s, r, P);
    if (carry || !borrow) memcpy(r, s, sizeof s);
}

ALWAYS_INLINE void fsub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    if (sub4(r, a, b)) add4(r, r, P);
}

/// a⁻¹ (Montgomery form in and out), as a^(p−2); a must not be zero.
static void finv(uint64_t r[4], const uint64_t a[4]) {
    static const uint64_t e[4] = {0xfffffffffffffffdULL, 0x00000000ffffffffULL, 0x0000000000000000ULL,
                                  0xffffffff00000001ULL};
    uint64_t x[4];
    memcpy(x, ONE_P, sizeof x);
    for (int bit = 255; bit >= 0; bit--) {
        fsqr(x, x);
        if ((e[bit >> 6] >> (bit & 63)) & 1) fmul(x, x, a);
    }
    memcpy(r, x, sizeof x);
}

// MARK: Scalars mod n

ALWAYS_INLINE void nmul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) { mont_mul(r, a, b, N, N0); }

/// a⁻¹ mod n (Montgomery form in and out), as a^(n−2) with 4-bit windows; a must not be zero.
static void ninv(uint64_t r[4], const uint64_t a[4]) {
    static const uint64_t e[4] = {0xf3b9cac2fc63254fULL, 0xbce6faada7179e84ULL, 0xffffffffffffffffULL,
                                  0xffffffff00000000ULL};
    uint64_t powers[16][4];
    memcpy(powers[0], ONE_N, sizeof powers[0]);
    memcpy(powers[1], a, sizeof powers[1]);
    for (int i = 2; i < 16; i++) nmul(powers[i], powers[i - 1], a);
    uint64_t x[4];
    memcpy(x, ONE_N, sizeof x);
    for (int nibble = 63; nibble >= 0; nibble--) {
        for (int k = 0; k < 4; k++) nmul(x, x, x);
        unsigned digit = (unsigned)(e[nibble >> 4] >> ((nibble & 15) * 4)) & 15;
        if (digit) nmul(x, x, powers[digit]);
    }
    memcpy(r, x, sizeof x);
}

// MARK: Points

typedef struct {
    uint64_t x[4], y[4], z[4];
} jacobian;

/// r = 2·a (a = −3 formulas); a must not be the point at infinity nor have y = 0, which no
/// point of this prime-order group has.
static void point_double(jacobian *r, const jacobian *a) {
    uint64_t delta[4], gamma[4], beta[4], alpha[4], t1[4], t2[4];
    fsqr(delta, a->z);
    fsqr(gamma, a->y);
    fmul(beta, a->x, gamma);
    fsub(t1, a->x, delta);
    fadd(t2, a->x, delta);
    fmul(alpha, t1, t2);
    fadd(t1, alpha, alpha);
    fadd(alpha, t1, alpha);
    // z = (y + z)² − gamma − delta, before x and y are overwritten (r may be a).
    fadd(t1, a->y, a->z);
    fsqr(t1, t1);
    fsub(t1, t1, gamma);
    fsub(r->z, t1, delta);
    // x = alpha² − 8·beta
    fadd(beta, beta, beta);
    fadd(beta, beta, beta);  // 4·beta
    fsqr(t1, alpha);
    fadd(t2, beta, beta);  // 8·beta
    fsub(r->x, t1, t2);
    // y = alpha·(4·beta − x) − 8·gamma²
    fsub(t1, beta, r->x);
    fmul(t1, alpha, t1);
    fsqr(t2, gamma);
    fadd(t2, t2, t2);
    fadd(t2, t2, t2);
    fadd(t2, t2, t2);
    fsub(r->y, t1, t2);
}

/// a += (x, y), an affine point. Returns 0 without changing `a` when the two points have the
/// same x (equal or opposite points), which these formulas do not cover.
ALWAYS_INLINE int point_add_affine(jacobian *a, const uint64_t x[4], const uint64_t y[4]) {
    uint64_t zz[4], u2[4], s2[4], h[4], rr[4], hh[4], hhh[4], v[4], t[4];
    fsqr(zz, a->z);
    fmul(u2, x, zz);
    fmul(s2, y, a->z);
    fmul(s2, s2, zz);
    fsub(h, u2, a->x);
    if (is_zero(h)) return 0;
    fsub(rr, s2, a->y);
    fsqr(hh, h);
    fmul(hhh, h, hh);
    fmul(v, a->x, hh);
    // x3 = r² − h³ − 2·v
    fsqr(t, rr);
    fsub(t, t, hhh);
    fsub(t, t, v);
    fsub(a->x, t, v);
    // y3 = r·(v − x3) − y1·h³
    fsub(t, v, a->x);
    fmul(t, rr, t);
    fmul(hhh, a->y, hhh);
    fsub(a->y, t, hhh);
    // z3 = z1·h
    fmul(a->z, a->z, h);
    return 1;
}

/// Writes `count` Jacobian points as affine (x, y) pairs, with one inversion for all of them.
static void normalize(uint64_t *out, const jacobian *points, int count, uint64_t (*scratch)[4]) {
    // scratch[k] = z0·z1·…·zk
    memcpy(scratch[0], points[0].z, sizeof scratch[0]);
    for (int k = 1; k < count; k++) fmul(scratch[k], scratch[k - 1], points[k].z);
    uint64_t inverse[4];
    finv(inverse, scratch[count - 1]);
    for (int k = count - 1; k >= 0; k--) {
        uint64_t zinv[4], zinv2[4], zinv3[4];
        if (k > 0) {
            fmul(zinv, inverse, scratch[k - 1]);
            fmul(inverse, inverse, points[k].z);
        } else {
            memcpy(zinv, inverse, sizeof zinv);
        }
        fsqr(zinv2, zinv);
        fmul(zinv3, zinv2, zinv);
        uint64_t *slot = out + (size_t)k * POINT_WORDS;
        fmul(slot, points[k].x, zinv2);
        fmul(slot + 4, points[k].y, zinv3);
    }
}

int kakin_p256_table_build(const uint8_t xy[64], uint64_t *table) {
    uint64_t x[4], y[4];
    from_bytes(x, xy);
    from_bytes(y, xy + 32);
    if (at_least(x, P) || at_least(y, P)) return 0;
    uint64_t bx[4], by[4];
    mont_mul(bx, x, RR_P, P, 1);
    mont_mul(by, y, RR_P, P, 1);
    // y² = x³ − 3x + b
    uint64_t lhs[4], rhs[4], t[4];
    fsqr(lhs, by);
    fsqr(rhs, bx);
    fmul(rhs, rhs, bx);
    fadd(t, bx, bx);
    fadd(t, t, bx);
    fsub(rhs, rhs, t);
    fadd(rhs, rhs, B_MONT);
    if (!equal(lhs, rhs)) return 0;

    jacobian multiples[DIGITS];
    uint64_t scratch[DIGITS][4];
    for (int window = 0; window < WINDOWS; window++) {
        // bx, by: the affine point 2^(8·window)·Q. multiples[d − 1] = d·that point.
        memcpy(multiples[0].x, bx, sizeof bx);
        memcpy(multiples[0].y, by, sizeof by);
        memcpy(multiples[0].z, ONE_P, sizeof ONE_P);
        point_double(&multiples[1], &multiples[0]);
        for (int d = 3; d <= DIGITS; d++) {
            multiples[d - 1] = multiples[d - 2];
            if (!point_add_affine(&multiples[d - 1], bx, by)) return 0;
        }
        uint64_t *row = table + (size_t)window * DIGITS * POINT_WORDS;
        normalize(row, multiples, DIGITS, scratch);
        // The next window's point: 256 times this one, from 128 times it.
        jacobian next;
        memcpy(next.x, row + 127 * POINT_WORDS, sizeof next.x);
        memcpy(next.y, row + 127 * POINT_WORDS + 4, sizeof next.y);
        memcpy(next.z, ONE_P, sizeof ONE_P);
        point_double(&next, &next);
        uint64_t zinv[4], zinv2[4], zinv3[4];
        finv(zinv, next.z);
        fsqr(zinv2, zinv);
        fmul(zinv3, zinv2, zinv);
        fmul(bx, next.x, zinv2);
        fmul(by, next.y, zinv3);
    }
    return 1;
}

/// acc += u·(the table's point), one table point per non-zero byte of u. Returns 0 when an
/// addition met equal or opposite points.
ALWAYS_INLINE int add_multiple(jacobian *acc, int *empty, const uint64_t *table, const uint64_t u[4]) {
    for (int window = 0; window < WINDOWS; window++) {
        unsigned digit = (unsigned)(u[window >> 3] >> ((window & 7) * 8)) & 0xff;
        if (!digit) continue;
        const uint64_t *point = table + ((size_t)window * DIGITS + (digit - 1)) * POINT_WORDS;
        if (*empty) {
            memcpy(acc->x, point, sizeof acc->x);
            memcpy(acc->y, point + 4, sizeof acc->y);
            memcpy(acc->z, ONE_P, sizeof acc->z);
            *empty = 0;
        } else if (!point_add_affine(acc, point, point + 4)) {
            return 0;
        }
    }
    return 1;
}

int kakin_p256_verify(
    const uint64_t *generator_table, const uint64_t *key_table, const uint8_t digest[32], const uint8_t rs[64]) {
    uint64_t r[4], s[4], e[4];
    from_bytes(r, rs);
    from_bytes(s, rs + 32);
    if (is_zero(r) || is_zero(s) || at_least(r, N) || at_least(s, N)) return 0;
    // The hash is exactly as long as n, so it is reduced by at most one subtraction.
    from_bytes(e, digest);
    if (at_least(e, N)) sub4(e, e, N);

    uint64_t sm[4], inverse[4], u1[4], u2[4];
    nmul(sm, s, RR_N);
    ninv(inverse, sm);
    // A Montgomery product of a plain number and a Montgomery-form one is plain.
    nmul(u1, e, inverse);
    nmul(u2, r, inverse);

    jacobian acc;
    int empty = 1;
    if (!add_multiple(&acc, &empty, generator_table, u1)) return -1;
    if (!add_multiple(&acc, &empty, key_table, u2)) return -1;
    if (empty) return 0;  // u1 = u2 = 0 cannot happen with r ≠ 0, but never read an empty sum.

    // The affine x is X/Z²; it is r mod n when X = r·Z², or X = (r + n)·Z² with r + n < p.
    uint64_t zz[4], candidate[4], product[4];
    fsqr(zz, acc.z);
    if (is_zero(zz)) return 0;
    mont_mul(candidate, r, RR_P, P, 1);
    fmul(product, candidate, zz);
    if (equal(product, acc.x)) return 1;
    uint64_t shifted[4];
    if (!add4(shifted, r, N) && !at_least(shifted, P)) {
        mont_mul(candidate, shifted, RR_P, P, 1);
        fmul(product, candidate, zz);
        if (equal(product, acc.x)) return 1;
    }
    return 0;
}
