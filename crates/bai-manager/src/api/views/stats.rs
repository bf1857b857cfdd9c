//! `GET /session/{reference}/stats`: a session's recent use, from the monitor's readings.

use bai_api::sessions::Stats;
use bai_ground::stats::Readings;
use bai_ground::stats::view::{idle_checks, reports};
use bai_store::SessionRow;

/// The session's recent use as the API shows it: the interval, the samples, and the
/// cumulative counters of the last reading.
pub fn stats(readings: &Readings, row: &SessionRow) -> Stats {
    Stats {
        interval_secs: readings.config.interval.as_secs_f64(),
        samples: readings.stats.samples(row.id),
        counters: readings.stats.last(row.id),
        idle_checks: idle_checks(reports(readings, row)),
    }
}
