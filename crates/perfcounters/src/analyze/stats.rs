//! Streaming statistics of one column: mergeable summaries of a span of values (min, max, sum,
//! least-squares sums), the percentiles' subsample and the chart's spans, each bounded by
//! [`MAX_KEPT`] whatever the log's length.

use crate::log::model::LogTime;

/// Values kept per column for percentiles and charts.
pub const MAX_KEPT: usize = 2000;

/// A mergeable summary of the values of one column in a span of time.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Bucket {
    /// Values seen.
    pub(super) n: u64,
    /// Their minimum.
    pub(super) min: f64,
    /// Their maximum.
    pub(super) max: f64,
    /// Their sum.
    pub(super) sum: f64,
    /// Least-squares sums, t in hours since t0.
    st: f64,
    stt: f64,
    stv: f64,
    /// Bit k: a value equal to the column's k-th `eq` threshold was seen.
    pub(super) eq_hits: u64,
}

impl Bucket {
    #[inline]
    fn push(&mut self, t: f64, v: f64, eq: &[f64]) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.n += 1;
        self.sum += v;
        self.st += t;
        self.stt += t * t;
        self.stv += t * v;
        for (k, e) in eq.iter().enumerate().take(64) {
            if v == *e {
                self.eq_hits |= 1 << k;
            }
        }
    }

    /// Adds the values `o` summarises.
    #[inline]
    pub(super) fn merge(&mut self, o: &Bucket) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.n += o.n;
        self.sum += o.sum;
        self.st += o.st;
        self.stt += o.stt;
        self.stv += o.stv;
        self.eq_hits |= o.eq_hits;
    }

    /// The slope of the least-squares line through the values, per hour; `None` with fewer than
    /// two distinct times.
    #[inline]
    pub(super) fn slope(&self) -> Option<f64> {
        let n = self.n as f64;
        let den = n * self.stt - self.st * self.st;
        if self.n < 2 || den.abs() <= f64::EPSILON * n * self.stt.abs().max(1.0) {
            return None;
        }
        let slope = (n * self.stv - self.st * self.sum) / den;
        slope.is_finite().then_some(slope)
    }
}

/// Every value while there are at most [`MAX_KEPT`], then every 2nd, 4th … in time order.
#[derive(Clone, Debug, Default)]
pub(super) struct Subsample {
    pub(super) points: Vec<(LogTime, f64)>,
    stride: u64,
    seen: u64,
}

impl Subsample {
    fn push(&mut self, t: LogTime, v: f64) {
        let stride = self.stride.max(1);
        if self.seen.is_multiple_of(stride) {
            if self.points.len() == MAX_KEPT {
                let mut i = 0;
                self.points.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.stride = stride * 2;
                if self.seen.is_multiple_of(self.stride) {
                    self.points.push((t, v));
                }
            } else {
                self.points.push((t, v));
            }
        }
        self.seen += 1;
    }

    /// The nearest-rank percentile `p` of `sorted`.
    pub(super) fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
        if sorted.is_empty() {
            return None;
        }
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted
            .get(rank.saturating_sub(1).min(sorted.len() - 1))
            .copied()
    }
}

/// The minimum and maximum of a span of consecutive values, with their times.
#[derive(Clone, Copy, Debug)]
struct Span {
    n: u64,
    min: (LogTime, f64),
    max: (LogTime, f64),
}

/// A chart series: the minimum and maximum of each span of `span` consecutive values, at most
/// [`MAX_KEPT`] / 2 spans (pairs of spans merge, and `span` doubles, when one more would not fit).
#[derive(Debug, Default)]
pub(super) struct Chart {
    spans: Vec<Span>,
    span: u64,
    /// The most spans kept; 0 for [`MAX_KEPT`] / 2.
    cap: usize,
}

impl Chart {
    /// A chart of at most `spans` spans (`2 × spans` points) rather than [`MAX_KEPT`] / 2.
    pub(super) fn with_spans(spans: usize) -> Self {
        Chart {
            cap: spans.max(1),
            ..Chart::default()
        }
    }

    pub(super) fn push(&mut self, t: LogTime, v: f64) {
        let span = self.span.max(1);
        if let Some(last) = self.spans.last_mut().filter(|s| s.n < span) {
            last.n += 1;
            if v < last.min.1 {
                last.min = (t, v);
            }
            if v > last.max.1 {
                last.max = (t, v);
            }
            return;
        }
        let cap = if self.cap == 0 {
            MAX_KEPT / 2
        } else {
            self.cap
        };
        if self.spans.len() >= cap {
            self.spans = self
                .spans
                .chunks(2)
                .map(|p| {
                    let mut s = p[0];
                    if let Some(o) = p.get(1) {
                        s.n += o.n;
                        if o.min.1 < s.min.1 {
                            s.min = o.min;
                        }
                        if o.max.1 > s.max.1 {
                            s.max = o.max;
                        }
                    }
                    s
                })
                .collect();
            self.span = span * 2;
            return self.push(t, v);
        }
        self.spans.push(Span {
            n: 1,
            min: (t, v),
            max: (t, v),
        });
    }

    /// The points in time order: each span's minimum and maximum (one point when they are the
    /// same value).
    pub(super) fn points(&self) -> Vec<(LogTime, f64)> {
        let mut out = Vec::with_capacity(self.spans.len() * 2);
        for s in &self.spans {
            if s.min.1 == s.max.1 || s.min.1.is_nan() || s.max.1.is_nan() {
                out.push(s.min);
            } else if s.min.0 <= s.max.0 {
                out.extend([s.min, s.max]);
            } else {
                out.extend([s.max, s.min]);
            }
        }
        out
    }
}

/// What is kept of one column (or generated series) during the pass.
pub(super) struct ColumnState {
    /// Buckets not evaluated yet.
    pub(super) buckets: Vec<Bucket>,
    /// Everything evaluated so far (the prefix for trends) / everything (statistics).
    pub(super) done: Bucket,
    pub(super) total: Bucket,
    /// The `eq` thresholds of the calls reading the column (bit k of [`Bucket::eq_hits`]).
    pub(super) eq: Vec<f64>,
    pub(super) sample: Subsample,
    pub(super) chart: Chart,
}

impl ColumnState {
    /// No value yet.
    pub(super) fn new() -> Self {
        ColumnState {
            buckets: Vec::new(),
            done: Bucket::default(),
            total: Bucket::default(),
            eq: Vec::new(),
            sample: Subsample::default(),
            chart: Chart::default(),
        }
    }

    /// Takes value `v` at time `t` (`hours` after the first record) into bucket `slot`.
    #[inline]
    pub(super) fn push(&mut self, slot: usize, hours: f64, t: LogTime, v: f64) {
        if self.buckets.len() <= slot {
            self.buckets.resize(slot + 1, Bucket::default());
        }
        if let Some(b) = self.buckets.get_mut(slot) {
            b.push(hours, v, &self.eq);
        }
        self.total.push(hours, v, &[]);
        self.sample.push(t, v);
        self.chart.push(t, v);
    }
}
#[cfg(test)]
mod chart_tests {
    use super::*;

    /// 10,000 values of 1 with one spike: the chart keeps 2,000 points at most, the spike among
    /// them at its time (a regular subsample, every 8th value, would have dropped it).
    #[test]
    fn a_spike_survives_decimation() {
        let mut chart = Chart::default();
        let mut regular = Subsample::default();
        for i in 0..10_000i64 {
            let v = if i == 7_777 { 100.0 } else { 1.0 };
            chart.push(LogTime(i), v);
            regular.push(LogTime(i), v);
        }
        let points = chart.points();
        assert!(points.len() <= MAX_KEPT, "{}", points.len());
        assert_eq!(chart.span, 16);
        assert_eq!(points.iter().filter(|p| p.1 == 100.0).count(), 1);
        assert!(points.contains(&(LogTime(7_777), 100.0)));
        // The span of the spike draws its minimum (the span's first 1) then the spike.
        let at = points.iter().position(|p| p.1 == 100.0).unwrap();
        assert_eq!(points[at - 1], (LogTime(7_776), 1.0));
        // In time order.
        assert!(points.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(!regular.points.iter().any(|p| p.1 == 100.0));
    }

    /// While the values fit, the chart is every value.
    #[test]
    fn every_value_while_they_fit() {
        let mut chart = Chart::default();
        for i in 0..1_000i64 {
            chart.push(LogTime(i), i as f64);
        }
        let points = chart.points();
        assert_eq!(points.len(), 1_000);
        assert_eq!(points[999], (LogTime(999), 999.0));
        // One more value pairs the spans: 501 spans, each its min and max (500 × 2 + 1).
        chart.push(LogTime(1_000), 1_000.0);
        let points = chart.points();
        assert_eq!(points.len(), 1_001);
        assert_eq!(
            &points[..3],
            &[(LogTime(0), 0.0), (LogTime(1), 1.0), (LogTime(2), 2.0)]
        );
    }
}
