//! Resolution: where the plan's objects, counters and instances are in one collection, found at
//! the previous collection's positions when they are still there, else by name, and each counter
//! prepared once for every instance (how its raw sample is packed, its calculator).

use std::collections::HashMap;

use crate::calc::{CalcError, Calculator, FormatOptions};
use crate::path::{eq_ignore_case, fold_case};
use crate::snapshot::{time_base, RawPacker};

use super::plan::Plan;
use super::view::View;

/// Where the plan's objects and counters are in one snapshot (`None`: not there); `F` as in
/// [`Prepared`]. The instances' positions are kept in their slots
/// ([`Slot::found`](super::plan::Slot::found)).
pub(super) struct Resolved<F> {
    pub(super) objects: Vec<Option<usize>>,
    pub(super) counters: Vec<Option<Prepared<F>>>,
}

/// One counter of one object, ready for every instance: how its raw sample is packed (reading the
/// view's fields `F`) and the calculator of its type and time base.
pub(super) struct Prepared<F> {
    pub(super) packer: RawPacker<F>,
    pub(super) calculator: Result<Calculator, CalcError>,
}

impl Plan {
    /// Finds every object, counter and instance of the plan in `view`: first at the position
    /// of the previous collection (a name comparison), else by name; found positions are kept for
    /// the next collection (the instances' in their slots).
    pub(super) fn resolve<V: View + ?Sized>(
        &mut self,
        view: &V,
        options: &FormatOptions,
    ) -> Resolved<V::Field> {
        let list = view.objects();
        let text = self.text.as_str();
        let objects: Vec<Option<usize>> = self
            .objects
            .iter_mut()
            .map(|s| match list.get(s.pos) {
                Some(o) if name_eq(o.name.as_deref(), s.name.of(text)) => Some(s.pos),
                _ => {
                    let found = list
                        .iter()
                        .position(|o| name_eq(o.name.as_deref(), s.name.of(text)))?;
                    s.pos = found;
                    Some(found)
                }
            })
            .collect();
        let object_at = |slot: usize| objects.get(slot).copied().flatten();
        let clock = view.clock();
        let counters = self
            .counters
            .iter_mut()
            .map(|s| {
                let at = object_at(s.object)?;
                let object = list.get(at)?;
                let name = s.name.of(text);
                let pos = match object.counters.get(s.pos) {
                    Some(d) if !d.counter_type.is_base() && name_eq(d.name.as_deref(), name) => {
                        s.pos
                    }
                    _ => {
                        let found = object.counter_position_by_name(name)?;
                        s.pos = found;
                        found
                    }
                };
                let ty = object.counters.get(pos)?.counter_type;
                let clock = object.sample_clock.unwrap_or(clock);
                Some(Prepared {
                    packer: RawPacker::new(object, clock, pos)?
                        .with_fields(|counter| view.field(at, counter)),
                    calculator: Calculator::new(ty, time_base(object, clock, ty), options),
                })
            })
            .collect();
        // An object whose instance names are the very ones the last collection resolved against
        // (a block whose instance layout did not change) keeps every instance position.
        let names: Vec<Option<u64>> = objects
            .iter()
            .map(|o| o.and_then(|o| view.names_id(o)))
            .collect();
        let last_names = &self.names;
        let same_names = |slot: usize| {
            names.get(slot).copied().flatten().is_some() && names.get(slot) == last_names.get(slot)
        };
        let mut maps: HashMap<usize, HashMap<String, usize>> = HashMap::new();
        for s in &mut self.instances {
            if same_names(s.object) {
                continue;
            }
            let found = (|| {
                let object = object_at(s.object)?;
                let count = view.instance_count(object)?;
                let wanted = s.name.of(text);
                match view.instance_name(object, s.pos) {
                    Some(name) if s.pos < count && eq_ignore_case(name, wanted) => Some(s.pos),
                    _ => {
                        let map = maps
                            .entry(s.object)
                            .or_insert_with(|| instance_positions(view, object, count));
                        let found = *map.get(fold_case(wanted).as_ref())?;
                        s.pos = found;
                        Some(found)
                    }
                }
            })();
            s.found = found.is_some();
        }
        self.names = names;
        Resolved { objects, counters }
    }
}

fn name_eq(name: Option<&str>, wanted: &str) -> bool {
    name.is_some_and(|n| eq_ignore_case(n, wanted))
}

/// The position of the first instance with each name among the `count` instances of object
/// `object`, keyed by the name's case-folded form.
fn instance_positions<V: View + ?Sized>(
    view: &V,
    object: usize,
    count: usize,
) -> HashMap<String, usize> {
    let mut m = HashMap::with_capacity(count);
    for i in 0..count {
        if let Some(name) = view.instance_name(object, i) {
            m.entry(fold_case(name).into_owned()).or_insert(i);
        }
    }
    m
}
