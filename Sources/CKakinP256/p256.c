#include "CKakinP256.h"

#include <string.h>

// Numbers are four 64-bit limbs, least significant first. Field elements (mod p) are kept in
// Montgomery form (a·2^256 mod p), always fully reduced, so equal values have equal limbs.

typedef unsigned __int128 u128;

#define ALWAYS_INLINE static inline __attribute__((always_inline))
/// For the field multiplication and squaring, which have many uses: inlined at each of them, the
/// point additions would no longer fit the instruction cache, and run slower.
#define OUT_OF_LINE static __attribute__((noinline))

/// The field prime p = 2^256 − 2^224 + 2^192 + 2^96 − 1.
static const uint64_t P[4] = {0xffffffffffffffffULL, 0x00000000ffffffffULL, 0x0000000000000000ULL,
                              0xffffffff00000001ULL};
/// The group order n.
static const uint64_t N[4] = {0xf3b9cac2fc632551ULL, 0xbce6faada7179e84ULL, 0xffffffffffffffffULL,
                              0xffffffff00000000ULL};
/// −n⁻¹ mod 2^64 (for p it is 1).
static const uint64_t N0 = 0xccd1c8aaee00bc4fULL;
/// 2^512 mod p: multiplying by it enters Montgomery form.
static const uint64_t RR_P[4] = {0x0000000000000003ULL, 0xfffffffbffffffffULL, 0xfffffffffffffffeULL,
                                 0x00000004fffffffdULL};
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

/// The top limb of p; the lower ones are 2^64 − 1, 2^32 − 1 and 0.
#define P3 0xffffffff00000001ULL

/// r = t − p if that does not go below zero, else t, where t is the 257-bit number (top, t[0..3])
/// and less than 2p.
ALWAYS_INLINE void reduce_once(uint64_t r[4], uint64_t top, const uint64_t t[4]) {
    uint64_t s[4];
    uint64_t borrow = sub4(s, t, P);
    uint64_t keep = 0 - (borrow & ~top & 1);  // all ones when t < p
    for (int i = 0; i < 4; i++) r[i] = (t[i] & keep) | (s[i] & ~keep);
}

/// r = t·2^−256 mod p for t < p·2^256 (eight limbs), fully reduced. Montgomery reduction is cheap
/// for this p: −p⁻¹ ≡ 1 (mod 2^64), so the multiple of p to add at each limb is that limb q
/// itself, and q·p only needs shifts of q and one product, q·(2^64 − 2^32 + 1): the limb becomes
/// q·2^64, hence q·2^32 at the next one.
ALWAYS_INLINE void redc(uint64_t r[4], uint64_t t[8]) {
    uint64_t carry = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t q = t[i];
        u128 c = (u128)t[i + 1] + (q << 32);
        t[i + 1] = (uint64_t)c;
        c = (u128)t[i + 2] + (q >> 32) + (uint64_t)(c >> 64);
        t[i + 2] = (uint64_t)c;
        c = (u128)q * P3 + t[i + 3] + (uint64_t)(c >> 64);
        t[i + 3] = (uint64_t)c;
        c = (u128)t[i + 4] + carry + (uint64_t)(c >> 64);
        t[i + 4] = (uint64_t)c;
        carry = (uint64_t)(c >> 64);
    }
    reduce_once(r, carry, t + 4);
}

/// r = a·b·2^−256 mod p, for a, b < p, fully reduced.
OUT_OF_LINE void fmul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    uint64_t t[8];
    uint64_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    for (int i = 0; i < 4; i++) {
        uint64_t bi = b[i];
        u128 c = (u128)a0 * bi + (i ? t[i] : 0);
        t[i] = (uint64_t)c;
        c = (u128)a1 * bi + (i ? t[i + 1] : 0) + (uint64_t)(c >> 64);
        t[i + 1] = (uint64_t)c;
        c = (u128)a2 * bi + (i ? t[i + 2] : 0) + (uint64_t)(c >> 64);
        t[i + 2] = (uint64_t)c;
        c = (u128)a3 * bi + (i ? t[i + 3] : 0) + (uint64_t)(c >> 64);
        t[i + 3] = (uint64_t)c;
        t[i + 4] = (uint64_t)(c >> 64);
    }
    redc(r, t);
}

/// r = a²·2^−256 mod p, for a < p, fully reduced: each cross product once, then doubled.
OUT_OF_LINE void fsqr(uint64_t r[4], const uint64_t a[4]) {
    uint64_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    uint64_t t[8];
    // a0·(a1, a2, a3), a1·(a2, a3), a2·a3 at limbs 1 to 6.
    u128 c = (u128)a0 * a1;
    t[1] = (uint64_t)c;
    c = (u128)a0 * a2 + (uint64_t)(c >> 64);
    t[2] = (uint64_t)c;
    c = (u128)a0 * a3 + (uint64_t)(c >> 64);
    t[3] = (uint64_t)c;
    t[4] = (uint64_t)(c >> 64);
    c = (u128)a1 * a2 + t[3];
    t[3] = (uint64_t)c;
    c = (u128)a1 * a3 + t[4] + (uint64_t)(c >> 64);
    t[4] = (uint64_t)c;
    t[5] = (uint64_t)(c >> 64);
    c = (u128)a2 * a3 + t[5];
    t[5] = (uint64_t)c;
    t[6] = (uint64_t)(c >> 64);
    // Doubled, plus the squares a_i² at limbs 2i.
    t[7] = t[6] >> 63;
    t[6] = (t[6] << 1) | (t[5] >> 63);
    t[5] = (t[5] << 1) | (t[4] >> 63);
    t[4] = (t[4] << 1) | (t[3] >> 63);
    t[3] = (t[3] << 1) | (t[2] >> 63);
    t[2] = (t[2] << 1) | (t[1] >> 63);
    t[1] = t[1] << 1;
    c = (u128)a0 * a0;
    t[0] = (uint64_t)c;
    c = (u128)t[1] + (uint64_t)(c >> 64);
    t[1] = (uint64_t)c;
    u128 s = (u128)a1 * a1;
    c = (u128)t[2] + (uint64_t)s + (uint64_t)(c >> 64);
    t[2] = (uint64_t)c;
    c = (u128)t[3] + (uint64_t)(s >> 64) + (uint64_t)(c >> 64);
    t[3] = (uint64_t)c;
    s = (u128)a2 * a2;
    c = (u128)t[4] + (uint64_t)s + (uint64_t)(c >> 64);
    t[4] = (uint64_t)c;
    c = (u128)t[5] + (uint64_t)(s >> 64) + (uint64_t)(c >> 64);
    t[5] = (uint64_t)c;
    s = (u128)a3 * a3;
    c = (u128)t[6] + (uint64_t)s + (uint64_t)(c >> 64);
    t[6] = (uint64_t)c;
    t[7] = t[7] + (uint64_t)(s >> 64) + (uint64_t)(c >> 64);
    redc(r, t);
}
ALWAYS_INLINE void fadd(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    uint64_t t[4];
    uint64_t carry = add4(t, a, b);
    reduce_once(r, carry, t);
}

ALWAYS_INLINE void fsub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    uint64_t t[4];
    uint64_t mask = 0 - sub4(t, a, b);  // all ones when a < b: add p back
    uint64_t pm[4] = {P[0] & mask, P[1] & mask, 0, P[3] & mask};
    add4(r, t, pm);
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

/// A signed number in five limbs of 62 bits, least significant first: limbs 0 to 3 are in
/// [0, 2^62) and the last one carries the sign, so the value is l[0] + l[1]·2^62 + … + l[4]·2^248.
typedef struct {
    int64_t l[5];
} signed62;

#define MASK62 (UINT64_MAX >> 2)

/// n in that form.
static const signed62 N62 = {{0x33b9cac2fc632551LL, 0x339beab69c5e7a13LL, 0x3ffffffffffffffbLL,
                              0x3fffffc00000003fLL, 0xffLL}};

ALWAYS_INLINE void to_signed62(signed62 *r, const uint64_t a[4]) {
    r->l[0] = (int64_t)(a[0] & MASK62);
    r->l[1] = (int64_t)(((a[0] >> 62) | (a[1] << 2)) & MASK62);
    r->l[2] = (int64_t)(((a[1] >> 60) | (a[2] << 4)) & MASK62);
    r->l[3] = (int64_t)(((a[2] >> 58) | (a[3] << 6)) & MASK62);
    r->l[4] = (int64_t)(a[3] >> 56);
}

/// The inverse of `to_signed62`, for a value in [0, 2^256).
ALWAYS_INLINE void from_signed62(uint64_t r[4], const signed62 *a) {
    uint64_t l0 = (uint64_t)a->l[0], l1 = (uint64_t)a->l[1], l2 = (uint64_t)a->l[2], l3 = (uint64_t)a->l[3],
             l4 = (uint64_t)a->l[4];
    r[0] = l0 | (l1 << 62);
    r[1] = (l1 >> 2) | (l2 << 60);
    r[2] = (l2 >> 4) | (l3 << 58);
    r[3] = (l3 >> 6) | (l4 << 56);
}

/// a += n when a is negative.
ALWAYS_INLINE void add_n_if_negative(signed62 *a) {
    if (a->l[4] >= 0) return;
    int64_t carry = 0;
    for (int i = 0; i < 4; i++) {
        int64_t sum = a->l[i] + N62.l[i] + carry;
        a->l[i] = (int64_t)((uint64_t)sum & MASK62);
        carry = sum >> 62;
    }
    a->l[4] += N62.l[4] + carry;
}

/// a = −a.
ALWAYS_INLINE void negate62(signed62 *a) {
    int64_t carry = 0;
    for (int i = 0; i < 4; i++) {
        int64_t difference = carry - a->l[i];
        a->l[i] = (int64_t)((uint64_t)difference & MASK62);
        carry = difference >> 62;
    }
    a->l[4] = carry - a->l[4];
}

/// The transition of 62 division steps: 2^62·f' = u·f + v·g and 2^62·g' = q·f + r·g.
typedef struct {
    int64_t u, v, q, r;
} transition;

/// Runs 62 division steps on (f, g), f odd, knowing only their low 64 bits (which decide those
/// steps), and returns the new delta. delta is kept doubled: an odd integer, 1 at the start.
///
/// One step, with g odd and delta > 0, replaces (f, g) by (g, (g − f)/2) and delta by 1 − delta;
/// with g odd otherwise, g by (g + f)/2 and delta by 1 + delta; with g even, g by g/2 and delta
/// by 1 + delta. Each row of the transition has |u| + |v| ≤ 2^62 (and |q| + |r| ≤ 2^62).
static int64_t divsteps62(int64_t delta, uint64_t f, uint64_t g, transition *t) {
    int64_t u = 1, v = 0, q = 0, r = 1;
    int left = 62;
    for (;;) {
        // Halve g as often as it has trailing zeros (at most the steps left), doubling (u, v)
        // instead so that the transition keeps the common factor 2^steps.
        int zeros = __builtin_ctzll(g | ((uint64_t)1 << left));
        g >>= zeros;
        u *= (int64_t)1 << zeros;
        v *= (int64_t)1 << zeros;
        delta += 2 * zeros;
        left -= zeros;
        if (left == 0) break;
        // g is odd. When delta > 0, (f, g) becomes (g, −f) and delta −delta first. Then, while
        // delta stays ≤ 0, each step adds f to g when g is odd and halves it: k such steps add
        // w·f with w = −g/f mod 2^k, the only w < 2^k that makes g divisible by 2^k. The
        // halvings are the next round's zeros.
        if (delta > 0) {
            delta = -delta;
            uint64_t x = f;
            f = g;
            g = -x;
            int64_t tu = u, tv = v;
            u = q;
            v = r;
            q = -tu;
            r = -tv;
        }
        int k = (int)((1 - delta) / 2);
        if (k > left) k = left;
        if (k > 6) k = 6;
        uint64_t f_inverse = f * (2 - f * f);  // f⁻¹ mod 2^6 (f·f ≡ 1 mod 8 for odd f)
        uint64_t w = (-g * f_inverse) & ((UINT64_C(1) << k) - 1);
        g += w * f;
        q += (int64_t)w * u;
        r += (int64_t)w * v;
    }
    t->u = u;
    t->v = v;
    t->q = q;
    t->r = r;
    return delta;
}

/// (f, g) = ((u·f + v·g)/2^62, (q·f + r·g)/2^62), which are exact divisions.
ALWAYS_INLINE void apply_to_fg(signed62 *f, signed62 *g, const transition *t) {
    __int128 cf = (__int128)t->u * f->l[0] + (__int128)t->v * g->l[0];
    __int128 cg = (__int128)t->q * f->l[0] + (__int128)t->r * g->l[0];
    cf >>= 62;
    cg >>= 62;
    for (int i = 1; i < 5; i++) {
        int64_t fi = f->l[i], gi = g->l[i];
        cf += (__int128)t->u * fi + (__int128)t->v * gi;
        cg += (__int128)t->q * fi + (__int128)t->r * gi;
        f->l[i - 1] = (int64_t)((uint64_t)cf & MASK62);
        g->l[i - 1] = (int64_t)((uint64_t)cg & MASK62);
        cf >>= 62;
        cg >>= 62;
    }
    f->l[4] = (int64_t)cf;
    g->l[4] = (int64_t)cg;
}

/// (d, e) = ((u·d + v·e)/2^62 mod n, (q·d + r·e)/2^62 mod n), from and to (−n, n).
ALWAYS_INLINE void apply_to_de(signed62 *d, signed62 *e, const transition *t) {
    __int128 cd = (__int128)t->u * d->l[0] + (__int128)t->v * e->l[0];
    __int128 ce = (__int128)t->q * d->l[0] + (__int128)t->r * e->l[0];
    // The multiples of n, in [−2^62, 0), that make the sums divisible by 2^62. With
    // |u| + |v| ≤ 2^62 the results are in (−2n, n).
    int64_t md = (int64_t)(((uint64_t)cd * N0) & MASK62) - ((int64_t)1 << 62);
    int64_t me = (int64_t)(((uint64_t)ce * N0) & MASK62) - ((int64_t)1 << 62);
    cd += (__int128)md * N62.l[0];
    ce += (__int128)me * N62.l[0];
    cd >>= 62;
    ce >>= 62;
    for (int i = 1; i < 5; i++) {
        int64_t di = d->l[i], ei = e->l[i];
        cd += (__int128)t->u * di + (__int128)t->v * ei + (__int128)md * N62.l[i];
        ce += (__int128)t->q * di + (__int128)t->r * ei + (__int128)me * N62.l[i];
        d->l[i - 1] = (int64_t)((uint64_t)cd & MASK62);
        e->l[i - 1] = (int64_t)((uint64_t)ce & MASK62);
        cd >>= 62;
        ce >>= 62;
    }
    d->l[4] = (int64_t)cd;
    e->l[4] = (int64_t)ce;
    add_n_if_negative(d);
    add_n_if_negative(e);
}

/// r = scale·a⁻¹ mod n, for 0 < a < n and 0 ≤ scale < n (plain numbers, not Montgomery form),
/// by division steps on (n, a) until g reaches 0, 62 at a time. Throughout, f·scale ≡ d·a and
/// g·scale ≡ e·a (mod n); at the end f = ±1, the greatest common divisor up to sign.
static void ninv(uint64_t r[4], const uint64_t a[4], const uint64_t scale[4]) {
    signed62 f = N62, g, d = {{0, 0, 0, 0, 0}}, e;
    to_signed62(&g, a);
    to_signed62(&e, scale);
    int64_t delta = 1;
    for (;;) {
        transition t;
        delta = divsteps62(delta, (uint64_t)f.l[0] | ((uint64_t)f.l[1] << 62),
                           (uint64_t)g.l[0] | ((uint64_t)g.l[1] << 62), &t);
        apply_to_de(&d, &e, &t);
        apply_to_fg(&f, &g, &t);
        if ((g.l[0] | g.l[1] | g.l[2] | g.l[3] | g.l[4]) == 0) break;
    }
    if (f.l[4] < 0) negate62(&d);
    add_n_if_negative(&d);
    from_signed62(r, &d);
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

/// a[k] += (x, y) of points[k] (an affine point, x then y), for each k < count (1 or 2),
/// operation by operation so that the processor overlaps the independent sums. Returns 0 without changing any
/// sum when a pair has the same x (equal or opposite points), which these formulas do not cover.
ALWAYS_INLINE int point_add_affine_lanes(jacobian *const a[], const uint64_t *const points[], int count) {
    uint64_t zz[2][4], u2[2][4], s2[2][4], h[2][4], rr[2][4], hh[2][4], hhh[2][4], v[2][4], t[2][4];
    for (int k = 0; k < count; k++) fsqr(zz[k], a[k]->z);
    for (int k = 0; k < count; k++) fmul(u2[k], points[k], zz[k]);
    for (int k = 0; k < count; k++) fmul(s2[k], points[k] + 4, a[k]->z);
    for (int k = 0; k < count; k++) fmul(s2[k], s2[k], zz[k]);
    for (int k = 0; k < count; k++) fsub(h[k], u2[k], a[k]->x);
    for (int k = 0; k < count; k++) {
        if (is_zero(h[k])) return 0;
    }
    for (int k = 0; k < count; k++) fsub(rr[k], s2[k], a[k]->y);
    for (int k = 0; k < count; k++) fsqr(hh[k], h[k]);
    for (int k = 0; k < count; k++) fmul(hhh[k], h[k], hh[k]);
    for (int k = 0; k < count; k++) fmul(v[k], a[k]->x, hh[k]);
    // x3 = r² − h³ − 2·v
    for (int k = 0; k < count; k++) fsqr(t[k], rr[k]);
    for (int k = 0; k < count; k++) {
        fsub(t[k], t[k], hhh[k]);
        fsub(t[k], t[k], v[k]);
        fsub(a[k]->x, t[k], v[k]);
    }
    // y3 = r·(v − x3) − y1·h³
    for (int k = 0; k < count; k++) fsub(t[k], v[k], a[k]->x);
    for (int k = 0; k < count; k++) fmul(t[k], rr[k], t[k]);
    for (int k = 0; k < count; k++) fmul(hhh[k], a[k]->y, hhh[k]);
    for (int k = 0; k < count; k++) fsub(a[k]->y, t[k], hhh[k]);
    // z3 = z1·h
    for (int k = 0; k < count; k++) fmul(a[k]->z, a[k]->z, h[k]);
    return 1;
}

/// a += (x, y), an affine point. Returns 0 without changing `a` when the two points have the
/// same x (equal or opposite points), which these formulas do not cover.
ALWAYS_INLINE int point_add_affine(jacobian *a, const uint64_t x[4], const uint64_t y[4]) {
    uint64_t point[8];
    memcpy(point, x, 4 * sizeof(uint64_t));
    memcpy(point + 4, y, 4 * sizeof(uint64_t));
    jacobian *const sums[1] = {a};
    const uint64_t *const points[1] = {point};
    return point_add_affine_lanes(sums, points, 1);
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
    fmul(bx, x, RR_P);
    fmul(by, y, RR_P);
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

/// The X and Z (Jacobian) of a + b, whose Y is not needed. Returns 0 when the sum is the point
/// at infinity. With U1 = X1·Z2², U2 = X2·Z1², S1 = Y1·Z2³, S2 = Y2·Z1³, H = U2 − U1 and
/// R = S2 − S1, the sum has X = R² − H³ − 2·U1·H² and Z = Z1·Z2·H; H = 0 means equal points
/// (R = 0), which double, or opposite ones.
static int sum_xz(uint64_t x[4], uint64_t z[4], const jacobian *a, const jacobian *b) {
    uint64_t z1z1[4], z2z2[4], u1[4], u2[4], s1[4], s2[4], h[4], rr[4], hh[4], hhh[4], v[4], t[4];
    fsqr(z1z1, a->z);
    fsqr(z2z2, b->z);
    fmul(u1, a->x, z2z2);
    fmul(u2, b->x, z1z1);
    fmul(s1, a->y, b->z);
    fmul(s2, b->y, a->z);
    fmul(s1, s1, z2z2);
    fmul(s2, s2, z1z1);
    fsub(h, u2, u1);
    fsub(rr, s2, s1);
    if (is_zero(h)) {
        if (!is_zero(rr)) return 0;
        jacobian twice;
        point_double(&twice, a);
        memcpy(x, twice.x, sizeof twice.x);
        memcpy(z, twice.z, sizeof twice.z);
        return 1;
    }
    fsqr(hh, h);
    fmul(z, a->z, b->z);
    fmul(hhh, h, hh);
    fmul(v, u1, hh);
    fsqr(t, rr);
    fmul(z, z, h);
    fsub(t, t, hhh);
    fsub(t, t, v);
    fsub(x, t, v);
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

    // inverse = s⁻¹ in Montgomery form (s⁻¹·2^256 mod n).
    uint64_t inverse[4], u[2][4];
    ninv(inverse, s, ONE_N);
    // A Montgomery product of a plain number and a Montgomery-form one is plain.
    nmul(u[0], e, inverse);
    nmul(u[1], r, inverse);

    // The table points to add: one per non-zero byte of u1 (from the generator's table) and of
    // u2 (from the key's), null for a zero byte. Their memory is requested first, so that the
    // reads overlap instead of each waiting in turn.
    const uint64_t *const tables[2] = {generator_table, key_table};
    const uint64_t *chosen[WINDOWS][2];
    for (int window = 0; window < WINDOWS; window++) {
        for (int k = 0; k < 2; k++) {
            unsigned digit = (unsigned)(u[k][window >> 3] >> ((window & 7) * 8)) & 0xff;
            const uint64_t *point = NULL;
            if (digit) {
                point = tables[k] + ((size_t)window * DIGITS + (digit - 1)) * POINT_WORDS;
                __builtin_prefetch(point);
                __builtin_prefetch(point + POINT_WORDS - 1);
            }
            chosen[window][k] = point;
        }
    }

    // sums[0] = u1·G and sums[1] = u2·Q, added side by side; they are added together at the end.
    jacobian sums[2];
    int empty[2] = {1, 1};
    for (int window = 0; window < WINDOWS; window++) {
        jacobian *lanes[2];
        const uint64_t *points[2];
        int count = 0;
        for (int k = 0; k < 2; k++) {
            const uint64_t *point = chosen[window][k];
            if (!point) continue;
            if (empty[k]) {
                memcpy(sums[k].x, point, sizeof sums[k].x);
                memcpy(sums[k].y, point + 4, sizeof sums[k].y);
                memcpy(sums[k].z, ONE_P, sizeof sums[k].z);
                empty[k] = 0;
            } else {
                lanes[count] = &sums[k];
                points[count] = point;
                count++;
            }
        }
        if (count == 2) {
            if (!point_add_affine_lanes(lanes, points, 2)) return -1;
        } else if (count == 1) {
            if (!point_add_affine_lanes(lanes, points, 1)) return -1;
        }
    }

    // The sum's X and Z (Jacobian), or those of the only non-empty part.
    uint64_t x[4], z[4];
    if (empty[0] && empty[1]) return 0;  // u1 = u2 = 0 cannot happen with r ≠ 0.
    if (empty[0] || empty[1]) {
        const jacobian *only = empty[0] ? &sums[1] : &sums[0];
        memcpy(x, only->x, sizeof x);
        memcpy(z, only->z, sizeof z);
    } else if (!sum_xz(x, z, &sums[0], &sums[1])) {
        return 0;
    }

    // The affine x is X/Z²; it is r mod n when X = r·Z², or X = (r + n)·Z² with r + n < p.
    uint64_t zz[4], candidate[4], product[4];
    fsqr(zz, z);
    if (is_zero(zz)) return 0;
    fmul(candidate, r, RR_P);
    fmul(product, candidate, zz);
    if (equal(product, x)) return 1;
    uint64_t shifted[4];
    if (!add4(shifted, r, N) && !at_least(shifted, P)) {
        fmul(candidate, shifted, RR_P);
        fmul(product, candidate, zz);
        if (equal(product, x)) return 1;
    }
    return 0;
}

int kakin_p256_check_inverse(const uint8_t a[32]) {
    uint64_t value[4];
    from_bytes(value, a);
    if (is_zero(value) || at_least(value, N)) return -1;
    // value⁻¹ in Montgomery form, times value (plain), is 1 (plain).
    uint64_t inverse[4], product[4];
    ninv(inverse, value, ONE_N);
    nmul(product, value, inverse);
    static const uint64_t one[4] = {1, 0, 0, 0};
    return equal(product, one);
}
