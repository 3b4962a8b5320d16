//! `%.20g`'s digits: the first 20 significant decimal digits of any finite `f64`, correctly
//! rounded (ties to even, as the C runtimes and `core::fmt` round), in integer arithmetic.
//!
//! A double is `m · 2^e` (`m` below 2^53), so its decimal expansion is finite and exact.
//!
//! Most values of a log (percentages, rates, averages: `10^-3 ≤ v < 2^53` with a fraction) take a
//! shortcut: with `exp` the decimal exponent of the first digit (from the binary exponent and one
//! comparison with a power of ten), the 20 digits are `⌊m · 10^(19 − exp) / 2^k⌋`, one 128-bit
//! product shifted, rounded exactly (ties to even) by what is added before the shift, with no
//! branch on the digits.
//!
//! Every other double takes one of three paths, each exact, chosen by the binary exponent:
//!
//! * **`e` from -64 to 10 (what counters hold: below 2^63, at most 64 fraction bits):** the
//!   integer part `m >> k` in a `u64`, and the fraction `f / 2^k` in another: multiplying it by
//!   10^19 (`10^19 · f < 2^128`, one 64 × 64-bit multiplication) moves the next 19 digits above the
//!   binary point. A value like `12.345678` takes two multiplications.
//! * **`k = -e` from 65 to 1074 (below about 5·10^-20: tiny values, subnormals):** the same fixed
//!   point, wider: the fraction is `k` bits in up to 17 limbs of 64 bits, multiplied by 10^19 a
//!   step, the carry out of the top limb being the next 19 digits. Only the limbs between the
//!   lowest and the highest non-zero one are multiplied: the value starts in the lowest limbs and
//!   climbs about 63 bits a step, so a step costs two or three 64-bit multiplications, and the
//!   leading zeros of 10^-300 cost 16 steps.
//! * **`e` from 11 to 971 (integers from 2^63 on; the PDH-CSV writer writes smaller integers
//!   itself):** the integer `m · 2^e` in base 10^9 (limbs of nine decimal digits), built from `m` by
//!   multiplying by 2^32 at a time (each limb a 64-bit product, split by a division by the constant
//!   10^9, which compiles to a multiplication): at most 31 steps over at most 35 limbs. Its top
//!   limbs are the digits.
//!
//! Each path yields at least 21 digits and whether anything non-zero follows them, and one rounding
//! step makes 20 of them. Any double takes well under a microsecond; `core::fmt` (`{:.19e}`, kept as
//! the tests' reference) falls back to big-number arithmetic for most 20-digit requests.

/// Room for the digits a path writes: 21 kept, a step of 19 (and eight bytes of a group) beyond.
const ALL: usize = 64;

/// 10^19, the digits of one step of the wide fraction.
const E19: u64 = 10_000_000_000_000_000_000;

/// 10^9, the base of the wide integer.
const E9: u64 = 1_000_000_000;

/// The first 20 significant digits of `v` (> 0, finite), in ASCII, correctly rounded (ties to
/// even), and the decimal exponent of the first: `v ≈ d.ddd… × 10^exp`. See the module's docs.
pub(super) fn digits20(v: f64) -> ([u8; 20], i32) {
    if let Some((d, exp)) = scaled(v) {
        let [first, middle, last] = ascii20(d);
        let mut digits = [0u8; 20];
        digits[..4].copy_from_slice(&first.to_le_bytes()[..4]);
        digits[4..12].copy_from_slice(&middle.to_le_bytes());
        digits[12..].copy_from_slice(&last.to_le_bytes());
        return (digits, exp);
    }
    let (m, e) = decompose(v);
    // The significant digits (`n` of them, at least 21 unless the expansion is shorter; the
    // rest is '0'), the decimal exponent of the first, and whether anything non-zero follows.
    let mut all = [b'0'; ALL];
    let (exp, sticky) = if e > 10 {
        wide_integer(&mut all, m, e as u32)
    } else if e < -64 {
        wide_fraction(&mut all, m, (-e) as u32)
    } else {
        narrow(&mut all, m, e)
    };
    round20(&all, exp, sticky)
}

/// `v` (finite, ≥ 0) as `m · 2^e`, `m` below 2^53.
fn decompose(v: f64) -> (u64, i32) {
    let bits = v.to_bits();
    let exp_bits = ((bits >> 52) & 0x7FF) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if exp_bits == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp_bits - 1075)
    }
}

/// For `10^-3 ≤ v < 2^53` with a fraction (`v` > 0, finite), the values of most logs: its first 20
/// significant digits as an integer `d` (`10^19 ≤ d < 10^20`), correctly rounded, and the decimal
/// exponent of the first (-3 to 15); `None` for values out of that range (zero, non-finite and
/// negative values among them). An integer in the range gets its digits too (then zeros). See
/// [`scaled`].
#[inline(always)]
pub(super) fn fraction_digits20(v: f64) -> Option<(u128, i32)> {
    scaled(v)
}

/// The 20 decimal digits of `d` (below 10^20, leading zeros included) in ASCII, the first in the
/// lowest byte, as three groups: the first four in the low half of a `u64`, then eight and eight.
/// The first four digits are `⌊⌊d / 2^16⌋ / 5^16⌋` (10^16 = 2^16 · 5^16), a division of 64 bits
/// by a constant; the sixteen after them (below 10^16) are the low 64 bits of `d` less that times
/// 10^16, split in two by a division by 10^8. Built in registers, so that a caller stores them once
/// where they go (digits stored in pieces and loaded back whole stall the load).
pub(super) fn ascii20(d: u128) -> [u64; 3] {
    const E16: u64 = 10_000_000_000_000_000;
    let top = ((d >> 16) as u64) / 152_587_890_625;
    // The remainder is below 10^16 < 2^64: wrapping 64-bit arithmetic gives it exactly.
    let rest = (d as u64).wrapping_sub(top.wrapping_mul(E16));
    [
        ascii8(top as u32, 4) & 0xFFFF_FFFF,
        ascii8((rest / 100_000_000) as u32, 0),
        ascii8((rest % 100_000_000) as u32, 0),
    ]
}

/// 10^0 … 10^22.
const POW10: [u128; 23] = {
    let mut t = [1u128; 23];
    let mut i = 1;
    while i < 23 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// 10^0 … 10^19, the powers of ten of 64 bits.
pub(super) const POW10_64: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// 10^-3 … 10^16 as doubles: from 10^0 on exactly, and 0.1, 0.01 and 0.001 round up to their
/// doubles, so that no double lies between the real power of ten and the literal: `v ≥ 0.1` as
/// doubles is `v ≥ 1/10` exactly.
const POW10_F64: [f64; 20] = [
    1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
    1e14, 1e15, 1e16,
];

/// The digits of `v = m / 2^k` for `10^-3 ≤ v < 2^53` (`k` from 1 to 62), the values of most logs
/// (percentages, rates, averages), at once: with `exp` the decimal exponent of `v`'s first digit,
/// the 20 digits are `D = ⌊v · 10^(19 − exp)⌋ = ⌊m · 10^s / 2^k⌋`, one 128-bit product shifted
/// (one 64 × 64-bit multiplication from `v ≥ 1` on, where 10^s < 2^64), rounded exactly, ties to
/// even, by adding `2^(k−1) − 1` and the parity of `D` before the shift. `m · 10^s < 2^53 · 10^22
/// < 2^127`. `None` for other values.
///
/// `exp` is `⌊log10 v⌋`: with `v` in `[2^e2, 2^(e2+1))`, it is `g = ⌊e2 · log10 2⌋` (`e2 · 1233 /
/// 2^12`, exact for these `e2`) or `g + 1`, and one comparison with 10^(g+1) tells. No branch
/// depends on the value's digits.
#[inline(always)]
fn scaled(v: f64) -> Option<(u128, i32)> {
    let bits = v.to_bits();
    // v = 1.f · 2^e2 (v ≥ 10^-3 is normal).
    let e2 = ((bits >> 52) & 0x7FF) as i32 - 1023;
    if e2 >= 52 || v < 1e-3 {
        return None;
    }
    let m = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    // 1 to 62 (e2 from -10 to 51); the mask tells the compiler the shifts stay below 64.
    let k = (52 - e2).unsigned_abs() & 63;
    let g = (e2 * 1233) >> 12;
    let exp = g + i32::from(v >= *POW10_F64.get(usize::try_from(g + 4).ok()?)?);
    let s = usize::try_from(19 - exp).ok()?;
    let p = match POW10_64.get(s) {
        Some(&t) => u128::from(m) * u128::from(t),
        None => u128::from(m) * *POW10.get(s)?,
    };
    let odd = (p >> k) & 1;
    let d = (p + ((1u128 << (k - 1)) - 1) + odd) >> k;
    Some(if d == POW10[20] {
        (POW10[19], exp + 1)
    } else {
        (d, exp)
    })
}

/// Rounds the digits in `all` (21 significant ones at least, then whether anything non-zero
/// follows: `sticky`) to 20, ties to even.
fn round20(all: &[u8; ALL], mut exp: i32, sticky: bool) -> ([u8; 20], i32) {
    let sticky = sticky || all[21..].iter().any(|&d| d != b'0');
    let round = all[20];
    let mut digits = [0u8; 20];
    digits.copy_from_slice(&all[..20]);
    // ASCII digits: b'0' is even, so the parity of the byte is the digit's.
    let up = round > b'5' || (round == b'5' && (sticky || digits[19] % 2 == 1));
    if up {
        let mut i = 20;
        loop {
            if i == 0 {
                digits = [b'0'; 20];
                digits[0] = b'1';
                exp += 1;
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    (digits, exp)
}

/// The digits of `m · 2^e` for `-64 ≤ e ≤ 10` (`m` > 0, below 2^53) into `all`; the exponent of
/// the first and whether a non-zero fraction is left beyond them.
///
/// The integer part `m >> k` is a `u64`; the fraction `f / 2^k` (`k ≤ 64`) gives 19 digits per
/// 64 × 64-bit multiplication (`10^19 · f < 2^128`). The digits are written in ASCII eight at a
/// time into a buffer with room for what a step writes beyond the 21 kept (no copy of a variable
/// length).
fn narrow(all: &mut [u8; ALL], m: u64, e: i32) -> (i32, bool) {
    let (int_part, mut f, k): (u64, u64, u32) = if e >= 0 {
        (m << e, 0, 0)
    } else {
        let k = (-e) as u32;
        let i = if k >= 64 { 0 } else { m >> k };
        (i, m - (i << k.min(63)), k)
    };
    let mask = u64::MAX >> (64 - k.max(1));
    let mut n = 0usize;
    let mut exp: i32 = -1;
    if int_part > 0 {
        n = put_digits(all, int_part);
        exp = n as i32 - 1;
    }
    while f != 0 && n < 21 {
        let y = u128::from(f) * u128::from(E19);
        let chunk = (y >> k) as u64;
        f = (y as u64) & mask;
        put_fraction_step(all, &mut n, &mut exp, chunk);
    }
    (exp, f != 0)
}

/// The digits of `m / 2^k` for `65 ≤ k ≤ 1074` (`m` > 0, below 2^53) into `all`: a fixed point
/// of up to 17 limbs, multiplied by 10^19 a step (see the module's docs). The exponent of the
/// first digit and whether a non-zero fraction is left.
fn wide_fraction(all: &mut [u8; ALL], m: u64, k: u32) -> (i32, bool) {
    // The fraction as an integer of `limbs` × 64 bits (value = F / 2^(64 · limbs)), lowest limb
    // first: m shifted left by 64 · limbs − k (below 64), over two limbs.
    let limbs = k.div_ceil(64) as usize;
    let shift = 64 * limbs as u32 - k;
    let mut f = [0u64; 17];
    let wide = u128::from(m) << shift;
    f[0] = wide as u64;
    f[1] = (wide >> 64) as u64;
    // The lowest and the highest limb that may be non-zero.
    let mut lo = usize::from(f[0] == 0);
    let mut hi = usize::from(f[1] != 0);
    let mut n = 0usize;
    let mut exp: i32 = -1;
    while n < 21 {
        let mut carry = 0u64;
        for limb in &mut f[lo..=hi] {
            let p = u128::from(*limb) * u128::from(E19) + u128::from(carry);
            *limb = p as u64;
            carry = (p >> 64) as u64;
        }
        // The carry out of the top limb is the integer part: the next 19 digits.
        let chunk = if hi + 1 < limbs {
            f[hi + 1] = carry;
            hi += usize::from(carry != 0);
            0
        } else {
            carry
        };
        while lo < hi && f[lo] == 0 {
            lo += 1;
        }
        put_fraction_step(all, &mut n, &mut exp, chunk);
        if f[lo] == 0 && lo == hi {
            break;
        }
    }
    (exp, f[lo..=hi].iter().any(|&x| x != 0))
}

/// Appends the 19 digits of one step of a fraction (`chunk` < 10^19, the next 19 digits after the
/// `n` already in `all`) for [`narrow`] and [`wide_fraction`]. Before the first significant digit
/// (`n` = 0) the chunk's leading zeros are not digits: they only lower the exponent `exp` of the
/// first one.
fn put_fraction_step(all: &mut [u8; ALL], n: &mut usize, exp: &mut i32, chunk: u64) {
    if *n == 0 {
        let len = put_digits(all, chunk);
        *exp -= (19 - len) as i32;
        *n = len;
    } else {
        put_padded(&mut all[*n..], chunk, 19);
        *n += 19;
    }
}

/// The digits of the integer `m · 2^e` for `11 ≤ e ≤ 971` (`m` > 0, below 2^53) into `all`: in
/// base 10^9, `m` multiplied by 2^32 at a time (see the module's docs). The exponent of the first
/// digit and whether a non-zero digit follows the ones written.
fn wide_integer(all: &mut [u8; ALL], m: u64, e: u32) -> (i32, bool) {
    // Below 2^1024 < 10^309: 35 limbs of nine digits, lowest first.
    let mut d = [0u64; 36];
    let mut len = 0;
    let mut x = m;
    while x > 0 {
        d[len] = x % E9;
        x /= E9;
        len += 1;
    }
    let mut e = e;
    while e > 0 {
        let s = e.min(32);
        e -= s;
        // Each limb below 10^9 < 2^30, shifted by 32 at most, plus a carry below 2^33: no
        // overflow.
        let mut carry = 0u64;
        for limb in &mut d[..len] {
            let p = (*limb << s) + carry;
            *limb = p % E9;
            carry = p / E9;
        }
        while carry > 0 {
            d[len] = carry % E9;
            carry /= E9;
            len += 1;
        }
    }
    // The top limb has one to nine digits, the others nine each.
    let mut n = put_digits(all, d[len - 1]);
    let exp = n as i32 - 1 + 9 * (len as i32 - 1);
    let mut i = len - 1;
    while n < 21 && i > 0 {
        i -= 1;
        put_padded(&mut all[n..], d[i], 9);
        n += 9;
    }
    (exp, d[..i].iter().any(|&x| x != 0))
}

/// The eight decimal digits of `n` (below 10^8, leading zeros included) as digit values 0–9, the
/// first in the lowest byte: both halves of four digits, then their pairs, then the digits, split
/// at once in the lanes of one `u64` (a multiplication by a reciprocal per split instead of a
/// division per pair).
fn eight_digits(n: u32) -> u64 {
    let n = u64::from(n);
    // Two 32-bit lanes of four digits each, the first four in the low lane.
    let x = (n / 10_000) | ((n % 10_000) << 32);
    // x / 100 in each lane (x · 10486 / 2^20 for x < 10^4), then four 16-bit lanes of two digits.
    let hundreds = ((x * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let x = hundreds | ((x - hundreds * 100) << 16);
    // x / 10 in each lane (x · 103 / 2^10 for x < 100), then eight bytes of one digit.
    let tens = ((x * 103) >> 10) & 0x000F_000F_000F_000F;
    tens | ((x - tens * 10) << 8)
}

/// `n` (below 10^8) as eight ASCII digits, the first in the lowest byte, shifted `skip` digits
/// (below 8) to the front; what is shifted in is `'0'`.
fn ascii8(n: u32, skip: u32) -> u64 {
    (eight_digits(n) >> (8 * skip)) | 0x3030_3030_3030_3030
}

/// Writes the decimal digits of `x` in ASCII at the start of `out` and returns how many (`0` has
/// none). Eight digits are stored at a time (the first group shifted past its leading zeros), so
/// up to eight bytes after the digits may be overwritten with `'0'`: `out` has 24 bytes at least.
pub(super) fn put_digits(out: &mut [u8], x: u64) -> usize {
    const E8: u64 = 100_000_000;
    if x == 0 {
        return 0;
    }
    // The first group (one to eight digits) and how many groups of eight follow it.
    let (first, rest) = if x < E8 {
        (x, 0)
    } else if x < E8 * E8 {
        (x / E8, 1)
    } else {
        (x / (E8 * E8), 2)
    };
    // `first` > 0: at most seven leading zeros.
    let zeros = eight_digits(first as u32).trailing_zeros() / 8;
    let n = 8 - zeros as usize;
    out[..8].copy_from_slice(&ascii8(first as u32, zeros).to_le_bytes());
    match rest {
        0 => n,
        1 => {
            out[n..n + 8].copy_from_slice(&ascii8((x % E8) as u32, 0).to_le_bytes());
            n + 8
        }
        _ => {
            out[n..n + 8].copy_from_slice(&ascii8((x / E8 % E8) as u32, 0).to_le_bytes());
            out[n + 8..n + 16].copy_from_slice(&ascii8((x % E8) as u32, 0).to_le_bytes());
            n + 16
        }
    }
}

/// Writes `x` (below 10^c) as exactly `c` (1 to 19) ASCII digits, with leading zeros, at the start
/// of `out`; up to eight bytes after them may be overwritten with `'0'`.
fn put_padded(out: &mut [u8], x: u64, c: usize) {
    const E8: u64 = 100_000_000;
    // The first group has `h` digits (1 to 8), the groups after it eight each.
    let groups = c.div_ceil(8);
    let h = c - 8 * (groups - 1);
    let skip = (8 - h) as u32;
    match groups {
        1 => out[..8].copy_from_slice(&ascii8(x as u32, skip).to_le_bytes()),
        2 => {
            out[..8].copy_from_slice(&ascii8((x / E8) as u32, skip).to_le_bytes());
            out[h..h + 8].copy_from_slice(&ascii8((x % E8) as u32, 0).to_le_bytes());
        }
        _ => {
            out[..8].copy_from_slice(&ascii8((x / (E8 * E8)) as u32, skip).to_le_bytes());
            out[h..h + 8].copy_from_slice(&ascii8((x / E8 % E8) as u32, 0).to_le_bytes());
            out[h + 8..h + 16].copy_from_slice(&ascii8((x % E8) as u32, 0).to_le_bytes());
        }
    }
}

/// The first 20 significant digits of `v` (> 0, finite), correctly rounded (ties to even), and the
/// decimal exponent of the first: `v ≈ d.ddd… × 10^exp`. Uses `core::fmt`'s exact formatting: the
/// reference [`digits20`] is tested against.
#[cfg(test)]
pub(super) fn digits20_slow(v: f64) -> ([u8; 20], i32) {
    use std::io::Write as _;
    // `{:.19e}` is correctly rounded to 20 significant digits: "d.ddd…de±x".
    let mut buf = [0u8; 40];
    let mut cur = &mut buf[..];
    let _ = write!(cur, "{v:.19e}");
    let written = 40 - cur.len();
    let s = buf.get(..written).unwrap_or(&[]);
    let e_pos = s.iter().position(|&b| b == b'e').unwrap_or(s.len());
    let mantissa = s.get(..e_pos).unwrap_or(&[]);
    let exp: i32 = std::str::from_utf8(s.get(e_pos + 1..).unwrap_or(&[]))
        .ok()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0);
    let mut digits = [b'0'; 20];
    for (d, &b) in digits
        .iter_mut()
        .zip(mantissa.iter().filter(|b| b.is_ascii_digit()))
    {
        *d = b;
    }
    (digits, exp)
}

#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn digits_equal_core_fmt(x in proptest::prelude::any::<u64>(), shift in 0u32..64) {
            for x in [x, x >> shift, 0, 1, u64::MAX, 99_999_999, 100_000_000, 10_000_000_000_000_000] {
                let mut out = [b'x'; 24];
                let n = put_digits(&mut out, x);
                let want = if x == 0 { String::new() } else { x.to_string() };
                proptest::prop_assert_eq!(&out[..n], want.as_bytes());
                // What is written beyond the digits is '0'.
                proptest::prop_assert!(out[n..].iter().all(|&b| b == b'x' || b == b'0'));
                for c in 1..=19usize {
                    if c < 20 && x < 10u64.pow(c as u32) {
                        let mut out = [b'x'; 27];
                        put_padded(&mut out, x, c);
                        let padded = format!("{x:0c$}");
                        proptest::prop_assert_eq!(&out[..c], padded.as_bytes());
                        proptest::prop_assert!(out[c..].iter().all(|&b| b == b'x' || b == b'0'));
                    }
                }
            }
        }
    }

    #[test]
    fn digits_equal_core_fmt_on_counter_values() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut checked = 0;
        for i in 0..200_000u32 {
            let r = next();
            let v = match i % 8 {
                0 => (r >> 11) as f64 / 9.1e12,
                1 => (r >> 11) as f64,
                2 => r as f64,
                3 => f64::from_bits(r >> 1),
                4 => (r % 1_000_000) as f64 / 8.0,
                5 => (r >> 11) as f64 * 1e-21,
                // Binary exponents from 2^-123 to 2^127, any mantissa.
                6 => f64::from_bits(((1075 - 123 + (r >> 52) % 198) << 52) | (r & ((1 << 52) - 1))),
                // Few significant bits: fractions that end early (0.375, 1234.5).
                _ => ((r >> 40) as f64) / f64::from(1u32 << (r % 24)),
            };
            if !v.is_finite() || v == 0.0 {
                continue;
            }
            assert_eq!(digits20(v), digits20_slow(v), "{v:e}");
            checked += 1;
        }
        assert!(checked > 190_000, "{checked}");
        // Exact ties go to even, as core::fmt (and the C runtimes) do.
        for v in [
            0.5,
            2.5,
            1.25,
            1e20 + 65536.0,
            9.999_999_999_999_999e19,
            123456789012345678901.0,
        ] {
            assert_eq!(digits20(v), digits20_slow(v), "{v:e}");
        }
    }

    /// The exact decimal expansion of `m · 2^e` in plain big-integer arithmetic (base 10^9
    /// limbs, one small factor at a time), as digits and the exponent of the first: the
    /// reference the three paths are held to. `m · 2^-k = m · 5^k / 10^k`.
    fn exact_decimal(m: u64, e: i32) -> (Vec<u8>, i32) {
        fn mul(d: &mut Vec<u64>, f: u64) {
            let mut carry = 0u64;
            for limb in d.iter_mut() {
                let p = *limb * f + carry;
                *limb = p % 1_000_000_000;
                carry = p / 1_000_000_000;
            }
            while carry > 0 {
                d.push(carry % 1_000_000_000);
                carry /= 1_000_000_000;
            }
        }
        let mut d = vec![
            m % 1_000_000_000,
            m / 1_000_000_000 % 1_000_000_000,
            m / 1_000_000_000_000_000_000,
        ];
        let (mut left, factor, shift) = if e >= 0 { (e, 2, 0) } else { (-e, 5, -e) };
        while left > 0 {
            mul(&mut d, factor);
            left -= 1;
        }
        let mut text: String = d.iter().rev().map(|l| format!("{l:09}")).collect();
        let first = text.find(|c| c != '0').unwrap();
        text.drain(..first);
        let exp = text.len() as i32 - 1 - shift;
        (text.into_bytes(), exp)
    }

    /// `exact_decimal` rounded to 20 digits, ties to even.
    fn reference20(v: f64) -> ([u8; 20], i32) {
        let bits = v.to_bits();
        let exp_bits = ((bits >> 52) & 0x7FF) as i32;
        let frac = bits & ((1u64 << 52) - 1);
        let (m, e) = if exp_bits == 0 {
            (frac, -1074)
        } else {
            (frac | (1 << 52), exp_bits - 1075)
        };
        let (digits, mut exp) = exact_decimal(m, e);
        let mut all = [b'0'; 20];
        for (a, &d) in all.iter_mut().zip(&digits) {
            *a = d;
        }
        let round = digits.get(20).copied().unwrap_or(b'0');
        let sticky = digits.iter().skip(21).any(|&d| d != b'0');
        if round > b'5' || (round == b'5' && (sticky || all[19] % 2 == 1)) {
            let mut i = 20;
            loop {
                if i == 0 {
                    all = [b'0'; 20];
                    all[0] = b'1';
                    exp += 1;
                    break;
                }
                i -= 1;
                if all[i] == b'9' {
                    all[i] = b'0';
                } else {
                    all[i] += 1;
                    break;
                }
            }
        }
        (all, exp)
    }

    /// Edge cases: subnormals, powers of two, 2^53 ± 1, values beside 10^k, the extremes, ties.
    fn edge_cases() -> Vec<f64> {
        let mut v = vec![
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::from_bits(1),
            f64::from_bits(2),
            f64::from_bits(3),
            f64::from_bits((1 << 52) - 1),
            f64::from_bits(1 << 52),
            f64::EPSILON,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            9_007_199_254_740_994.0,
            18_446_744_073_709_551_616.0,
            0.5,
            2.5,
            1e20 + 65536.0,
            123456789012345678901.0,
        ];
        for k in -1074..=1023 {
            v.push(2f64.powi(k));
        }
        for k in -323..=308 {
            let p: f64 = format!("1e{k}").parse().unwrap();
            if p > 0.0 && p.is_finite() {
                v.extend([
                    p,
                    f64::from_bits(p.to_bits() - 1),
                    f64::from_bits(p.to_bits() + 1),
                ]);
            }
        }
        v.retain(|x| x.is_finite() && *x > 0.0);
        v
    }

    #[test]
    fn digits_equal_references_on_edge_cases() {
        for v in edge_cases() {
            let want = reference20(v);
            assert_eq!(digits20(v), want, "{v:e}");
            assert_eq!(digits20_slow(v), want, "{v:e}");
        }
        // Known digits: the smallest subnormal, the largest double.
        assert_eq!(
            digits20(f64::from_bits(1)),
            (*b"49406564584124654418", -324)
        );
        assert_eq!(digits20(f64::MAX), (*b"17976931348623157081", 308));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn digits_equal_references_on_any_bits(bits in proptest::prelude::any::<u64>()) {
            let v = f64::from_bits(bits & !(1 << 63));
            if v.is_finite() && v > 0.0 {
                let got = digits20(v);
                proptest::prop_assert_eq!(got, digits20_slow(v), "{:e}", v);
                proptest::prop_assert_eq!(got, reference20(v), "{:e}", v);
            }
        }
    }
}
