//! One side's values of one counter in bounded memory: count, minimum, maximum and sum exactly;
//! every value while there are at most [`MAX_EXACT`]; and always a binned distribution whose bins
//! are at most [`MAX_BINS`] per sign, so that percentiles and the effect size cost the same
//! whatever the log's length.
//!
//! The bins are logarithmic, read straight from a value's bits: the magnitude's exponent and the
//! top [`MANTISSA_BITS`] bits of its mantissa, so a bin is at most 2⁻⁷ of its lower bound wide
//! (128 bins per power of two). When a counter's values would need more than [`MAX_BINS`] bins of
//! one sign, neighbouring bins merge in pairs (the width doubles) until they fit. Zero has a bin of
//! its own, negative values bins of their own. Each bin remembers its value while it has held only
//! one (a "pure" bin): comparisons and percentiles inside a pure bin are exact.

use std::cmp::Ordering;

/// Mantissa bits of a bin's key at full resolution: 128 bins per power of two.
pub(super) const MANTISSA_BITS: u32 = 7;
/// Bins per sign before neighbouring bins merge.
pub(super) const MAX_BINS: usize = 2048;
/// Values kept one by one (exact percentiles and effect size) before only the bins serve.
pub(super) const MAX_EXACT: usize = 1024;

/// The shift of a magnitude's bits to its key at level 0.
const SHIFT: u32 = 52 - MANTISSA_BITS;

/// One bin: how many values, and the value while there has been only one (NaN once mixed).
#[derive(Clone, Copy, Debug)]
struct Bin {
    count: u64,
    value: f64,
}

impl Bin {
    const EMPTY: Bin = Bin {
        count: 0,
        value: f64::NAN,
    };

    fn add(&mut self, count: u64, value: f64) {
        if count == 0 {
            return;
        }
        if self.count == 0 {
            self.value = value;
        } else if self.value != value {
            self.value = f64::NAN;
        }
        self.count += count;
    }
}

/// The bins of one sign: keys `lo ..` at `level` (a key is the magnitude's bits shifted right by
/// `SHIFT + level`).
#[derive(Clone, Debug, Default)]
struct Window {
    level: u32,
    lo: u64,
    bins: Vec<Bin>,
}

impl Window {
    fn key(bits: u64, level: u32) -> u64 {
        // Finite magnitudes are below 2⁶³ and `SHIFT + level` stays below 64: at level 7 every key
        // fits 2¹¹ bins, so the window never merges further.
        bits >> (SHIFT + level).min(63)
    }

    #[inline]
    fn push(&mut self, magnitude: f64) {
        let bits = magnitude.to_bits();
        loop {
            let k = Self::key(bits, self.level);
            if self.bins.is_empty() {
                self.lo = k;
                self.bins.push(Bin::EMPTY);
            }
            let len = self.bins.len() as u64;
            if k >= self.lo && k - self.lo < len {
                if let Some(b) = self.bins.get_mut((k - self.lo) as usize) {
                    b.add(1, magnitude);
                }
                return;
            }
            let lo = self.lo.min(k);
            let hi = (self.lo + len - 1).max(k);
            if hi - lo < MAX_BINS as u64 {
                if k < self.lo {
                    let grow = (self.lo - k) as usize;
                    self.bins
                        .splice(0..0, std::iter::repeat_n(Bin::EMPTY, grow));
                    self.lo = k;
                } else {
                    self.bins.resize((k - self.lo + 1) as usize, Bin::EMPTY);
                }
                continue;
            }
            self.coarsen(self.level + 1);
        }
    }

    /// The same bins at `level` (at least the current one): neighbours merged.
    fn coarsen(&mut self, level: u32) {
        if level <= self.level || self.bins.is_empty() {
            self.level = self.level.max(level);
            return;
        }
        let by = level - self.level;
        let lo = self.lo >> by;
        let mut bins: Vec<Bin> = Vec::new();
        for (i, b) in self.bins.iter().enumerate() {
            let k = ((self.lo + i as u64) >> by) - lo;
            let k = k as usize;
            if bins.len() <= k {
                bins.resize(k + 1, Bin::EMPTY);
            }
            if let Some(slot) = bins.get_mut(k) {
                slot.add(b.count, b.value);
            }
        }
        *self = Window { level, lo, bins };
    }

    /// The magnitudes bin `i` holds: `[lower, upper)`.
    fn bounds(&self, i: usize) -> (f64, f64) {
        let shift = (SHIFT + self.level).min(63);
        let k = self.lo + i as u64;
        let lower = f64::from_bits(k << shift);
        let upper = k
            .checked_add(1)
            .and_then(|k| k.checked_shl(shift))
            .map_or(f64::INFINITY, f64::from_bits);
        (lower, upper)
    }
}

/// A bin in value order, as [`Values::ordered_bins`] gives it.
#[derive(Clone, Copy, Debug)]
pub(super) struct OrderedBin {
    /// Orders the bins of both sides alike: (sign class, key).
    order: (u8, u64),
    count: u64,
    /// The single value it holds, NaN when it holds several.
    value: f64,
    /// The values it can hold: `[lower, upper]`.
    lower: f64,
    upper: f64,
}

/// One side's values of one counter.
#[derive(Clone, Debug)]
pub(super) struct Values {
    /// Values seen.
    pub(super) n: u64,
    pub(super) min: f64,
    pub(super) max: f64,
    pub(super) sum: f64,
    /// Every value while there are at most [`MAX_EXACT`].
    exact: Option<Vec<f64>>,
    zero: u64,
    positive: Window,
    negative: Window,
}

impl Default for Values {
    fn default() -> Self {
        Values {
            n: 0,
            min: f64::NAN,
            max: f64::NAN,
            sum: 0.0,
            exact: Some(Vec::new()),
            zero: 0,
            positive: Window::default(),
            negative: Window::default(),
        }
    }
}

impl Values {
    /// Takes a finite value.
    #[inline]
    pub(super) fn push(&mut self, v: f64) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.n += 1;
        self.sum += v;
        if let Some(e) = &mut self.exact {
            if e.len() < MAX_EXACT {
                e.push(v);
            } else {
                self.exact = None;
            }
        }
        if v == 0.0 {
            self.zero += 1;
        } else if v > 0.0 {
            self.positive.push(v);
        } else {
            self.negative.push(-v);
        }
    }

    /// The arithmetic mean; `None` without values.
    pub(super) fn avg(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    /// Whether every value is kept (percentiles and the effect size exact).
    pub(super) fn is_exact(&self) -> bool {
        self.exact.is_some()
    }

    /// The `p`-th percentile by the nearest-rank method (the value at rank ⌈p/100·n⌉ of the sorted
    /// values): exact while every value is kept or when the rank falls in a pure bin; otherwise
    /// the middle of its bin (within half a bin's width, at most 2⁻⁸ of the value at full
    /// resolution), kept within the minimum and maximum.
    pub(super) fn percentile(&self, p: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((p / 100.0) * self.n as f64).ceil().max(1.0) as u64;
        let rank = rank.min(self.n);
        if let Some(e) = &self.exact {
            let mut sorted = e.clone();
            sorted.sort_by(f64::total_cmp);
            return sorted.get(rank as usize - 1).copied();
        }
        let mut seen = 0u64;
        for b in self.ordered_bins(self.negative.level, self.positive.level) {
            seen += b.count;
            if seen >= rank {
                let v = if b.value.is_nan() {
                    (b.lower + b.upper) / 2.0
                } else {
                    b.value
                };
                return Some(v.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// The bins in value order, negative ones at `negative` level and positive ones at `positive`
    /// (each at least the current level of its sign).
    fn ordered_bins(&self, negative: u32, positive: u32) -> Vec<OrderedBin> {
        let mut out = Vec::new();
        let mut neg = self.negative.clone();
        neg.coarsen(negative);
        for i in (0..neg.bins.len()).rev() {
            let Some(b) = neg.bins.get(i).filter(|b| b.count > 0) else {
                continue;
            };
            let (lower, upper) = neg.bounds(i);
            out.push(OrderedBin {
                order: (0, u64::MAX - (neg.lo + i as u64)),
                count: b.count,
                value: -b.value,
                lower: -upper,
                upper: -lower,
            });
        }
        if self.zero > 0 {
            out.push(OrderedBin {
                order: (1, 0),
                count: self.zero,
                value: 0.0,
                lower: 0.0,
                upper: 0.0,
            });
        }
        let mut pos = self.positive.clone();
        pos.coarsen(positive);
        for (i, b) in pos.bins.iter().enumerate().filter(|(_, b)| b.count > 0) {
            let (lower, upper) = pos.bounds(i);
            out.push(OrderedBin {
                order: (2, pos.lo + i as u64),
                count: b.count,
                value: b.value,
                lower,
                upper,
            });
        }
        out
    }
}

/// Cliff's delta of `candidate` against `baseline`: P(C > B) − P(C < B) over every pair of a
/// candidate value C and a baseline value B, in [−1, 1], 0 for identical distributions, positive
/// when the candidate's values are larger; and a bound on its error.
///
/// Exact (error 0) when both sides kept every value. Otherwise from the bins, both sides brought
/// to the same bins: pairs in different bins compare by their bins, pairs in the same pure bins by
/// their values (exactly); pairs in the same bin where one side's bin holds several values count as
/// ties, and their share of all pairs is the error bound: the exact delta lies within
/// `delta ± error`. `None` when a side has no value.
pub(super) fn cliffs_delta(baseline: &Values, candidate: &Values) -> Option<(f64, f64)> {
    if baseline.n == 0 || candidate.n == 0 {
        return None;
    }
    if let (Some(b), Some(c)) = (&baseline.exact, &candidate.exact) {
        return Some((exact_delta(b, c), 0.0));
    }
    let negative = baseline.negative.level.max(candidate.negative.level);
    let positive = baseline.positive.level.max(candidate.positive.level);
    let b = baseline.ordered_bins(negative, positive);
    let c = candidate.ordered_bins(negative, positive);
    let (mut greater, mut less, mut unsure) = (0u128, 0u128, 0u128);
    // Baseline values in the bins before the current one, and in the current one.
    let (mut below, mut j) = (0u128, 0usize);
    let total_b = baseline.n as u128;
    for cb in &c {
        while let Some(bb) = b.get(j).filter(|bb| bb.order < cb.order) {
            below += bb.count as u128;
            j += 1;
        }
        let same = b.get(j).filter(|bb| bb.order == cb.order);
        let in_bin = same.map_or(0, |bb| bb.count as u128);
        let above = total_b - below - in_bin;
        let n = cb.count as u128;
        greater += n * below;
        less += n * above;
        if let Some(bb) = same {
            if !bb.value.is_nan() && !cb.value.is_nan() {
                match cb.value.total_cmp(&bb.value) {
                    Ordering::Greater => greater += n * in_bin,
                    Ordering::Less => less += n * in_bin,
                    Ordering::Equal => {}
                }
            } else {
                unsure += n * in_bin;
            }
        }
    }
    let pairs = total_b as f64 * candidate.n as f64;
    Some((
        (greater as f64 - less as f64) / pairs,
        unsure as f64 / pairs,
    ))
}

/// Cliff's delta over every value of both sides: each side sorted, then one walk.
fn exact_delta(baseline: &[f64], candidate: &[f64]) -> f64 {
    let mut b = baseline.to_vec();
    let mut c = candidate.to_vec();
    b.sort_by(f64::total_cmp);
    c.sort_by(f64::total_cmp);
    let (mut greater, mut less) = (0u128, 0u128);
    let (mut lo, mut hi) = (0usize, 0usize);
    for &x in &c {
        // b[..lo] < x, b[..hi] <= x.
        while b.get(lo).is_some_and(|&y| y < x) {
            lo += 1;
        }
        hi = hi.max(lo);
        while b.get(hi).is_some_and(|&y| y <= x) {
            hi += 1;
        }
        greater += lo as u128;
        less += (b.len() - hi) as u128;
    }
    (greater as f64 - less as f64) / (b.len() as f64 * c.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(v: impl IntoIterator<Item = f64>) -> Values {
        let mut out = Values::default();
        for x in v {
            out.push(x);
        }
        out
    }

    /// The delta by its definition, pair by pair.
    fn brute(b: &[f64], c: &[f64]) -> f64 {
        let mut s = 0i64;
        for x in c {
            for y in b {
                s += match x.partial_cmp(y).unwrap() {
                    Ordering::Greater => 1,
                    Ordering::Less => -1,
                    Ordering::Equal => 0,
                };
            }
        }
        s as f64 / (b.len() * c.len()) as f64
    }

    #[test]
    fn exact_delta_is_the_definition() {
        let b = [1.0, 2.0, 2.0, 3.0, 5.0, -1.0, 0.0];
        let c = [2.0, 2.0, 4.0, 0.0, 7.0];
        let d = cliffs_delta(&values(b), &values(c)).unwrap();
        assert_eq!(d, (brute(&b, &c), 0.0));
        // 0: −4, each 2: +1, 4: +5, 7: +7 over 7 × 5 pairs.
        assert_eq!(d.0, 10.0 / 35.0);
        let same = cliffs_delta(&values(b), &values(b)).unwrap();
        assert_eq!(same, (0.0, 0.0));
    }

    /// 20,000 values on each side (the bins serve): the delta lies within its bound of the
    /// exact one, and a side compared with itself is 0 exactly.
    #[test]
    fn binned_delta_within_its_bound() {
        let b: Vec<f64> = (0..20_000)
            .map(|i| ((i * 7919) % 10_007) as f64 / 37.0)
            .collect();
        let c: Vec<f64> = (0..20_000)
            .map(|i| ((i * 104_729) % 10_009) as f64 / 31.0 - 20.0)
            .collect();
        let (vb, vc) = (values(b.clone()), values(c.clone()));
        assert!(!vb.is_exact());
        let (d, err) = cliffs_delta(&vb, &vc).unwrap();
        let exact = {
            let bs = b.clone();
            exact_delta(&bs, &c)
        };
        assert!((d - exact).abs() <= err, "{d} {exact} {err}");
        assert!(err < 0.01, "{err}");
        assert_eq!(cliffs_delta(&vb, &vb).unwrap().0, 0.0);
        // Percentiles within half a bin (2⁻⁸ of the value) of the exact nearest rank.
        let mut sorted = b.clone();
        sorted.sort_by(f64::total_cmp);
        for p in [50.0, 95.0] {
            let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
            let want = sorted[rank - 1];
            let got = vb.percentile(p).unwrap();
            assert!(
                (got - want).abs() <= want.abs() / 256.0,
                "{p}: {got} {want}"
            );
        }
    }

    /// Integers take pure bins (below 128 each integer is a bin of its own): exact comparisons
    /// and percentiles from the bins alone.
    #[test]
    fn pure_bins_are_exact() {
        let b: Vec<f64> = (0..5_000).map(|i| (i % 100) as f64).collect();
        let c: Vec<f64> = (0..3_000).map(|i| (i % 50) as f64 * 2.0).collect();
        let (vb, vc) = (values(b.clone()), values(c.clone()));
        let (d, err) = cliffs_delta(&vb, &vc).unwrap();
        assert_eq!(err, 0.0);
        assert!((d - exact_delta(&b, &c)).abs() < 1e-12);
        assert_eq!(vb.percentile(50.0), Some(49.0));
        assert_eq!(vb.percentile(95.0), Some(94.0));
    }

    /// Values spread over 60 powers of two merge into wider bins, never beyond [`MAX_BINS`].
    #[test]
    fn wide_ranges_merge_bins() {
        let v: Vec<f64> = (0..60_000)
            .map(|i| 2f64.powf((i % 6_000) as f64 / 100.0) * if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let vv = values(v.clone());
        assert!(vv.positive.bins.len() <= MAX_BINS);
        assert!(vv.positive.level >= 2, "{}", vv.positive.level);
        let (d, err) = cliffs_delta(&vv, &vv).unwrap();
        assert_eq!(d, 0.0);
        assert!(err > 0.0);
        assert_eq!(vv.percentile(100.0), Some(vv.max));
        let low = vv.percentile(0.0).unwrap();
        assert_eq!(low, vv.min);
    }
}
