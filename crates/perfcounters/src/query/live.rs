//! Collecting a query again and again ([`LiveQuery`]), with its wildcard paths expanded again on an
//! [`ExpandSchedule`].

use crate::path::CounterPath;
use crate::source::{Request, Source, SourceError};

use super::{Collection, Query};

/// How long (in the data's time, 100 ns units) an expansion of wildcard paths is kept by
/// [`ExpandSchedule`]: the first collection due this long after it expands them again.
pub const EXPAND_EVERY: i64 = 10 * 10_000_000;

/// When a query with wildcards is expanded again ([`Query::collect_expanded`]) by a
/// [`LiveQuery`]: at the second collection (the first with values), then at the first
/// collection foreseen (from the last two collections' times) [`EXPAND_EVERY`] or more after the
/// last expansion. So every collection expands at intervals of 10 s or more, every 10th at 1 s.
/// An expansion collects a whole snapshot; the collections between may read V1 blocks in place.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExpandSchedule {
    expanded_at: i64,
    times: Option<(i64, i64)>,
}

impl ExpandSchedule {
    /// Whether the next collection expands.
    pub fn due(&self) -> bool {
        self.times.is_some_and(|(before, last)| {
            before == last
                || last.saturating_add(last.saturating_sub(before).max(0))
                    >= self.expanded_at.saturating_add(EXPAND_EVERY)
        })
    }

    /// Records a collection at `now` (the collection clock's `perf_time_100ns`), which expanded
    /// the paths (the first collection always does) or not.
    pub fn collected(&mut self, now: i64, expanded: bool) {
        if expanded {
            self.expanded_at = now;
        }
        self.times = Some(self.times.map_or((now, now), |(_, last)| (last, now)));
    }
}

/// A [`Query`] collected again and again, as `typeperf` collects: the first collection expands the
/// paths, and a query with wildcards expands them again on an [`ExpandSchedule`]
/// ([`Query::collect_expanded`]) so that an instance that starts gets its counters and one that
/// exits loses them; the collections between read only what the expansion resolved
/// ([`Query::collect`]). The `watch` command and the Python `Query` collect through it.
#[derive(Debug, Default)]
pub struct LiveQuery {
    query: Query,
    /// Whether the first collection was made.
    primed: bool,
    schedule: ExpandSchedule,
}

impl LiveQuery {
    /// Collects `query` from its first collection on.
    pub fn new(query: Query) -> Self {
        LiveQuery {
            query,
            primed: false,
            schedule: ExpandSchedule::default(),
        }
    }

    /// The query: its counters and the values of the last collection.
    pub fn query(&self) -> &Query {
        &self.query
    }

    /// The query, to build its request ([`Query::request`]).
    pub fn query_mut(&mut self) -> &mut Query {
        &mut self.query
    }

    /// The query, given back.
    pub fn into_query(self) -> Query {
        self.query
    }

    /// Collects `request` (from [`Query::request`]) from `source` into the query's values,
    /// expanding the paths again when the schedule says so and a path has a wildcard.
    ///
    /// # Errors
    /// The source's error; the query and the schedule are then as they were.
    pub fn collect<S: Source + ?Sized>(
        &mut self,
        source: &mut S,
        request: &Request,
    ) -> Result<Collection, SourceError> {
        let due = self.query.paths().iter().any(CounterPath::has_wildcard) && self.schedule.due();
        let collection = if due {
            self.query.collect_expanded(source, request)?
        } else {
            self.query.collect(source, request)?
        };
        self.schedule
            .collected(collection.clock.perf_time_100ns, !self.primed || due);
        self.primed = true;
        Ok(collection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The collections (0-based) that expand, for collections `gap` seconds apart.
    fn expanding(gap: i64, n: usize) -> Vec<usize> {
        let mut schedule = ExpandSchedule::default();
        let mut out = Vec::new();
        for i in 0..n {
            let due = i == 0 || schedule.due();
            if due {
                out.push(i);
            }
            schedule.collected(i as i64 * gap * 10_000_000, due);
        }
        out
    }

    #[test]
    fn wildcards_expand_again_every_ten_seconds_of_data() {
        // The priming collection, the second, then every 10 s.
        assert_eq!(expanding(1, 25), [0, 1, 11, 21]);
        assert_eq!(expanding(3, 12), [0, 1, 5, 9]);
        // 10 s or more apart: every collection.
        assert_eq!(expanding(60, 4), [0, 1, 2, 3]);
        assert_eq!(expanding(10, 3), [0, 1, 2]);
    }
}
