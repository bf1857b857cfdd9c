//! A Prometheus histogram of seconds with fixed buckets.

use std::sync::atomic::{AtomicU64, Ordering};

/// Upper bounds of the buckets, in seconds (the last, `+Inf`, is implied).
pub const BUCKETS: [f64; 12] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Debug, Clone, Default)]
pub struct Histogram {
    /// Observations at or below each bound (not cumulative; made so when written).
    counts: [u64; BUCKETS.len()],
    pub count: u64,
    pub sum: f64,
}

impl Histogram {
    pub fn observe(&mut self, secs: f64) {
        self.count += 1;
        self.sum += secs;
        if let Some(i) = BUCKETS.iter().position(|b| secs <= *b) {
            self.counts[i] += 1;
        }
    }

    /// `(le, cumulative count)` for every bucket, `+Inf` last.
    pub fn cumulative(&self) -> Vec<(String, u64)> {
        let mut acc = 0;
        let mut out: Vec<(String, u64)> = BUCKETS
            .iter()
            .zip(self.counts)
            .map(|(b, c)| {
                acc += c;
                (b.to_string(), acc)
            })
            .collect();
        out.push(("+Inf".into(), self.count));
        out
    }
}

/// A [`Histogram`] that many threads observe into without a lock (the store's connection
/// times, heard on every query).
#[derive(Debug, Default)]
pub struct AtomicHistogram {
    counts: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

impl AtomicHistogram {
    pub fn observe(&self, secs: f64) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_nanos
            .fetch_add((secs * 1e9) as u64, Ordering::Relaxed);
        if let Some(i) = BUCKETS.iter().position(|b| secs <= *b) {
            self.counts[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How many observations so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// The observations so far, as a [`Histogram`].
    pub fn snapshot(&self) -> Histogram {
        Histogram {
            counts: std::array::from_fn(|i| self.counts[i].load(Ordering::Relaxed)),
            count: self.count.load(Ordering::Relaxed),
            sum: self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atomic_histogram_reads_as_the_plain_one() {
        let (a, mut h) = (AtomicHistogram::default(), Histogram::default());
        for s in [0.0004, 0.02, 0.02, 3.0, 60.0] {
            a.observe(s);
            h.observe(s);
        }
        let snap = a.snapshot();
        assert_eq!(snap.cumulative(), h.cumulative());
        assert_eq!(snap.count, 5);
        assert!((snap.sum - h.sum).abs() < 1e-6);
    }

    #[test]
    fn buckets_are_cumulative_and_inf_counts_everything() {
        let mut h = Histogram::default();
        for s in [0.0005, 0.003, 0.003, 0.2, 30.0] {
            h.observe(s);
        }
        let c = h.cumulative();
        assert_eq!(c[0], ("0.001".into(), 1));
        assert_eq!(c[1], ("0.005".into(), 3));
        assert_eq!(c[6], ("0.25".into(), 4));
        assert_eq!(c[11], ("10".into(), 4));
        assert_eq!(c[12], ("+Inf".into(), 5));
        assert!((h.sum - 30.2065).abs() < 1e-9);
    }
}
