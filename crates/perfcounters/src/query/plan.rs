//! The plan of an expanded query: the distinct objects, counters and instances its counters read
//! (each looked up once per collection), the runs of counters that read one counter of one object,
//! and each counter's state between collections.

use std::collections::HashMap;

use crate::snapshot::Span;
use crate::status::PdhStatus;

use super::counter::QueryCounter;
use super::error::ExpandError;
use super::view::PERF_NO_UNIQUE_ID;

/// What a collection reads and writes for one counter besides its value, kept apart from the
/// [`QueryCounter`] (paths, names, errors) so that a collection walks compact arrays: the
/// counter's instance and the `unique_id` of the instance its last raw sample came from. That
/// sample itself is the counter's entry in [`Query::values`](super::Query::values), which the
/// next collection pairs with its own (a collection reads and writes each value once, in place).
#[derive(Clone, Copy, Debug)]
pub(super) struct CounterState {
    /// This counter's instance in [`Plan::instances`]; `NO_SLOT` for no instance.
    pub(super) instance_slot: u32,
    pub(super) unique_id: i32,
}

/// Consecutive counters that read one counter of one object (the instances a wildcard expanded,
/// or one concrete path): the counter is looked up once per run and collection.
#[derive(Clone, Copy, Debug)]
pub(super) struct Run {
    /// The status to report without looking at the data: the counters' path did not resolve and
    /// cannot start resolving later.
    pub(super) fixed: Option<PdhStatus>,
    /// The run's entries in [`Plan::objects`] and [`Plan::counters`].
    pub(super) object_slot: u32,
    pub(super) counter_slot: u32,
    /// Where the run ends in [`Query::state`](super::Query::state) and
    /// [`Query::values`](super::Query::values) (exclusive); it starts where the previous one ends.
    pub(super) end: usize,
}

/// [`CounterState::instance_slot`] of a counter without an instance.
pub(super) const NO_SLOT: u32 = u32::MAX;

/// One name the query looks up in each collection, and where it was found last time.
#[derive(Clone, Debug)]
pub(super) struct Slot {
    /// The object index in [`Plan::objects`] (unused for objects themselves).
    pub(super) object: usize,
    /// Where the name is in [`Plan::text`].
    pub(super) name: Span,
    pub(super) pos: usize,
    /// Whether the last collection found it (at `pos`); kept for instance slots, which
    /// [`Plan::resolve`] leaves as they are when the names did not change.
    pub(super) found: bool,
}

/// The distinct names the expanded counters refer to. Many counters read the same object, counter
/// and instance (a wildcard over 500 processes and 30 counters is 15,000 counters but 1 object, 30
/// counter names and 500 instance names), so [`Query::update`](super::Query::update) resolves
/// each name once per collection and each counter then reads its value through positions.
#[derive(Clone, Debug, Default)]
pub(super) struct Plan {
    pub(super) objects: Vec<Slot>,
    pub(super) counters: Vec<Slot>,
    pub(super) instances: Vec<Slot>,
    /// The slots' names, one after the other: when the instance names change, the slots are
    /// compared with them in one pass over two buffers rather than one allocation each.
    pub(super) text: String,
    /// For each object slot, the [`View::names_id`](super::view::View::names_id) of the names
    /// the instance slots were last resolved against.
    pub(super) names: Vec<Option<u64>>,
}

impl Plan {
    /// The plan of `counters`, their runs and each counter's state; counters that name the same
    /// thing share one slot.
    pub(super) fn build(counters: &[QueryCounter]) -> (Plan, Vec<Run>, Vec<CounterState>) {
        fn slot(
            list: &mut Vec<Slot>,
            text: &mut String,
            index: &mut HashMap<(usize, String), usize>,
            object: usize,
            name: &str,
            pos: usize,
        ) -> usize {
            if let Some(&i) = index.get(&(object, name.to_owned())) {
                return i;
            }
            let start = text.len();
            text.push_str(name);
            list.push(Slot {
                object,
                name: Span::since(start, text),
                pos,
                found: false,
            });
            index.insert((object, name.to_owned()), list.len() - 1);
            list.len() - 1
        }
        let slot_u32 = |i: usize| u32::try_from(i).unwrap_or(NO_SLOT);
        let mut plan = Plan::default();
        let (mut objects, mut counter_index, mut instance_index) =
            (HashMap::new(), HashMap::new(), HashMap::new());
        let mut runs: Vec<Run> = Vec::new();
        let mut state = Vec::with_capacity(counters.len());
        for c in counters {
            let object_slot = slot(
                &mut plan.objects,
                &mut plan.text,
                &mut objects,
                0,
                &c.object,
                c.object_pos,
            );
            let counter_slot = slot(
                &mut plan.counters,
                &mut plan.text,
                &mut counter_index,
                object_slot,
                &c.counter,
                c.counter_pos,
            );
            let instance_slot = c.instance.as_deref().map_or(NO_SLOT, |name| {
                slot_u32(slot(
                    &mut plan.instances,
                    &mut plan.text,
                    &mut instance_index,
                    object_slot,
                    name,
                    c.instance_pos,
                ))
            });
            // A path whose instance did not exist at expansion may appear later.
            let fixed = c
                .error
                .as_ref()
                .filter(|e| !matches!(e, ExpandError::NoInstance { .. }) || c.instance.is_none())
                .map(ExpandError::status);
            let run = Run {
                fixed,
                object_slot: slot_u32(object_slot),
                counter_slot: slot_u32(counter_slot),
                end: state.len() + 1,
            };
            match runs.last_mut() {
                Some(last)
                    if (last.fixed, last.object_slot, last.counter_slot)
                        == (run.fixed, run.object_slot, run.counter_slot) =>
                {
                    last.end = run.end;
                }
                _ => runs.push(run),
            }
            state.push(CounterState {
                instance_slot,
                unique_id: PERF_NO_UNIQUE_ID,
            });
        }
        (plan, runs, state)
    }
}
