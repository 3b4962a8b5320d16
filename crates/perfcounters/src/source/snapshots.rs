//! Helpers shared by the sources that produce whole snapshots (the Windows registry and PerfLib
//! sources, and the replay of captures): describing a snapshot as a [`Catalog`], keeping the requested
//! objects of a collection, and joining a V1 and a V2 snapshot of the same moment.

use super::{Catalog, CatalogCounter, ObjectInfo, Request, SourceError};
use crate::format::v2::{CounterSetRegistration, NO_COUNTER, PERF_ATTRIB_NO_DISPLAYABLE};
use crate::names::NameTable;
use crate::path::eq_ignore_case;
use crate::snapshot::{Object, ObjectData, Snapshot};

/// Describes one object of a snapshot. Objects without a name give `None`; counters without a name
/// and companion (base) counters are left out. Help texts come from `help` (by help index) when given.
pub fn object_info(object: &Object, help: Option<&NameTable>) -> Option<ObjectInfo> {
    let name = object.name.clone()?;
    let help_of = |index: u32| {
        help.and_then(|h| h.name(index))
            .unwrap_or_default()
            .to_string()
    };
    let counters = object
        .counters
        .iter()
        .filter(|c| c.counter_type.is_displayable())
        .filter_map(|c| {
            Some(CatalogCounter {
                name: c.name.clone()?,
                index: c.index,
                help: help_of(c.help_index),
                counter_type: c.counter_type,
                scale: c.scale,
                detail_level: c.detail_level,
                base_type: c
                    .base
                    .and_then(|b| object.counters.get(b))
                    .map(|b| b.counter_type),
            })
        })
        .collect();
    let multi_instance = match &object.data {
        ObjectData::Single(_) => false,
        ObjectData::Instances(_) => true,
        ObjectData::MetadataOnly { multiple_instances } => *multiple_instances,
    };
    Some(ObjectInfo {
        name,
        index: object.index,
        help: help_of(object.help_index),
        detail_level: object.detail_level,
        multi_instance,
        counters,
    })
}

/// Describes a V2 counterset registration as a catalog object (`None` when it has no name): the
/// counters of displayable types without `PERF_ATTRIB_NO_DISPLAYABLE` (so no bases or time stamps),
/// each with the type of its companion as [`crate::format::v2::to_snapshot`] pairs them. Counter ids
/// are not title indexes, so every `index` is 0.
pub fn counterset_info(r: &CounterSetRegistration) -> Option<ObjectInfo> {
    let name = r.name.clone()?;
    let counters = r
        .counters
        .iter()
        .filter(|c| c.counter_type.is_displayable() && c.attrib & PERF_ATTRIB_NO_DISPLAYABLE == 0)
        .filter_map(|c| {
            let companion = c.companion_id();
            Some(CatalogCounter {
                name: c.name.clone()?,
                index: 0,
                help: c.help.clone().unwrap_or_default(),
                counter_type: c.counter_type,
                scale: c.default_scale,
                detail_level: c.detail_level,
                base_type: (companion != NO_COUNTER)
                    .then(|| r.counter_position(companion))
                    .flatten()
                    .and_then(|p| r.counters.get(p))
                    .map(|b| b.counter_type),
            })
        })
        .collect();
    Some(ObjectInfo {
        name,
        index: 0,
        help: r.help.clone().unwrap_or_default(),
        detail_level: r.detail_level,
        multi_instance: r.is_multi_instance(),
        counters,
    })
}

/// The catalog of every named object of `snapshot`, in snapshot order. When several objects have the
/// same name only the first is listed.
pub fn catalog_of(snapshot: &Snapshot, help: Option<&NameTable>) -> Catalog {
    let mut catalog = Catalog::default();
    for object in &snapshot.objects {
        if let Some(info) = object_info(object, help) {
            if catalog.object(&info.name).is_none() {
                catalog.objects.push(info);
            }
        }
    }
    catalog
}

/// The instance names of `object` in `snapshot` (empty for single-instance objects), or an
/// [`SourceError::unknown_object`] error.
pub fn instances_of(snapshot: &Snapshot, object: &str) -> Result<Vec<String>, SourceError> {
    let o = snapshot
        .object_by_name(object)
        .ok_or_else(|| SourceError::unknown_object(object))?;
    Ok(o.instances().iter().map(|i| i.name().to_owned()).collect())
}

/// Keeps the objects of `snapshot` that `request` asks for, in request order (an object requested twice
/// appears once). Counter definitions are kept whole, so the requested counters keep their companions.
///
/// Errors: an object the snapshot does not hold gives [`SourceError::unknown_object`]; a requested
/// counter that the object lacks gives [`SourceError::unknown_counter`].
pub fn select_objects(mut snapshot: Snapshot, request: &Request) -> Result<Snapshot, SourceError> {
    let positions = select_positions(&snapshot.objects, request)?;
    let mut objects: Vec<Option<Object>> = std::mem::take(&mut snapshot.objects)
        .into_iter()
        .map(Some)
        .collect();
    snapshot.objects = positions
        .into_iter()
        .filter_map(|p| objects.get_mut(p).and_then(Option::take))
        .collect();
    Ok(snapshot)
}

/// The positions in `objects` of the objects [`select_objects`] keeps, in request order, with its
/// errors: for each requested object not selected yet, the first object with its name (case
/// ignored), which must hold every requested counter.
pub fn select_positions(objects: &[Object], request: &Request) -> Result<Vec<usize>, SourceError> {
    let named = |o: &Object, name: &str| o.name.as_deref().is_some_and(|n| eq_ignore_case(n, name));
    let mut selected: Vec<usize> = Vec::with_capacity(request.objects.len());
    for wanted in &request.objects {
        if selected
            .iter()
            .any(|&p| objects.get(p).is_some_and(|o| named(o, &wanted.object)))
        {
            continue;
        }
        let position = objects
            .iter()
            .position(|o| named(o, &wanted.object))
            .ok_or_else(|| SourceError::unknown_object(&wanted.object))?;
        let object = &objects[position];
        for counter in &wanted.counters {
            if object.counter_position_by_name(counter).is_none() {
                return Err(SourceError::unknown_counter(&wanted.object, counter));
            }
        }
        selected.push(position);
    }
    Ok(selected)
}

/// The part of `request` that a recorded sample holding `objects` can answer: the requested
/// objects it holds. An object the sample lacks but `catalog` lists is left out (a provider that
/// missed a collection); one the catalog does not list either is [`SourceError::unknown_object`].
pub fn present_objects(
    objects: &[Object],
    request: &Request,
    catalog: &Catalog,
) -> Result<Request, SourceError> {
    let mut present = Request::new();
    for wanted in &request.objects {
        let held = objects.iter().any(|o| {
            o.name
                .as_deref()
                .is_some_and(|n| eq_ignore_case(n, &wanted.object))
        });
        if held {
            present.objects.push(wanted.clone());
        } else if catalog.object(&wanted.object).is_none() {
            return Err(SourceError::unknown_object(&wanted.object));
        }
    }
    Ok(present)
}

/// Like [`select_objects`], but objects the snapshot lacks are left out instead of failing: a live
/// provider can miss one collection, and the query then reports `PDH_CSTATUS_NO_OBJECT` for it.
pub fn keep_objects(mut snapshot: Snapshot, request: &Request) -> Snapshot {
    let mut objects: Vec<Option<Object>> = std::mem::take(&mut snapshot.objects)
        .into_iter()
        .map(Some)
        .collect();
    for wanted in &request.objects {
        let position = objects.iter().position(|o| {
            o.as_ref()
                .and_then(|o| o.name.as_deref())
                .is_some_and(|n| eq_ignore_case(n, &wanted.object))
        });
        if let Some(object) = position
            .and_then(|p| objects.get_mut(p))
            .and_then(Option::take)
        {
            snapshot.objects.push(object);
        }
    }
    snapshot
}

/// Joins the V1 and the V2 snapshot of one collection: the V1 snapshot's header (system name and
/// time stamps) is kept and the V2 objects are appended, each keeping the V2 header's clock as its
/// [`Object::sample_clock`] (set here when the V2 snapshot did not set it), so its timers are computed
/// against the time stamps they were sampled with. With only one of them, that one is returned; a
/// V2-only snapshot gets `system_name` when its own is empty.
pub fn combine(v1: Option<Snapshot>, v2: Option<Snapshot>, system_name: &str) -> Option<Snapshot> {
    match (v1, v2) {
        (Some(mut a), Some(b)) => {
            let clock = b.clock();
            a.objects.extend(b.objects.into_iter().map(|mut o| {
                o.sample_clock.get_or_insert(clock);
                o
            }));
            Some(a)
        }
        (Some(a), None) => Some(a),
        (None, Some(mut b)) => {
            if b.system_name.is_empty() {
                b.system_name = system_name.to_string();
            }
            Some(b)
        }
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter_type::CounterType;
    use crate::snapshot::{CounterDefinition, Instance, SampleClock, Value};
    use crate::source::SourceErrorKind;

    /// An object with a fraction, its base and a raw count.
    fn object(index: u32, name: &str) -> Object {
        Object {
            default_counter: 0,
            ..Object::new(index)
        }
        .named(name)
        .with_counters(vec![
            CounterDefinition::new(1350, CounterType::PERF_RAW_FRACTION)
                .named("% Registry Quota In Use"),
            CounterDefinition::new(1350, CounterType::PERF_RAW_BASE).named(""),
            CounterDefinition::new(44, CounterType::PERF_COUNTER_RAWCOUNT)
                .named("Processor Queue Length"),
        ])
    }

    fn snapshot() -> Snapshot {
        Snapshot::new("HOST").with_objects(vec![
            object(2, "System").with_values(vec![Value::U32(1); 3]),
            object(238, "Processor")
                .with_instances(vec![Instance::new("0", vec![Value::U32(1); 3])]),
        ])
    }

    #[test]
    fn catalog_lists_displayable_named_counters_with_base_types() {
        let mut help = NameTable::new();
        help.insert(3, "System help");
        help.insert(1351, "Quota help");
        let catalog = catalog_of(&snapshot(), Some(&help));
        assert_eq!(catalog.objects.len(), 2);
        let system = &catalog.objects[0];
        assert_eq!(system.name, "System");
        assert_eq!(system.help, "System help");
        assert!(!system.multi_instance);
        let names: Vec<&str> = system.counters.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["% Registry Quota In Use", "Processor Queue Length"]);
        assert_eq!(
            system.counters[0].base_type,
            Some(CounterType::PERF_RAW_BASE)
        );
        assert_eq!(system.counters[0].help, "Quota help");
        assert_eq!(system.counters[1].base_type, None);
        assert!(catalog.objects[1].multi_instance);
        assert_eq!(instances_of(&snapshot(), "processor").unwrap(), ["0"]);
        assert!(instances_of(&snapshot(), "System").unwrap().is_empty());
        assert_eq!(
            instances_of(&snapshot(), "Nope").unwrap_err().kind(),
            SourceErrorKind::UnknownObject
        );
    }

    #[test]
    fn select_keeps_request_order_and_reports_unknowns() {
        let r = Request::new()
            .object("processor", &["% Registry Quota In Use"])
            .all_of("SYSTEM")
            .all_of("Processor");
        let s = select_objects(snapshot(), &r).unwrap();
        let names: Vec<&str> = s.objects.iter().filter_map(|o| o.name.as_deref()).collect();
        assert_eq!(names, ["Processor", "System"]);
        assert_eq!(s.objects[0].counters.len(), 3);
        let kept = keep_objects(snapshot(), &r.clone().all_of("Memory"));
        let names: Vec<&str> = kept
            .objects
            .iter()
            .filter_map(|o| o.name.as_deref())
            .collect();
        assert_eq!(names, ["Processor", "System"]);
        let e = select_objects(snapshot(), &Request::new().all_of("Memory")).unwrap_err();
        assert_eq!(e.to_string(), "no object named 'Memory'");
        let e =
            select_objects(snapshot(), &Request::new().object("System", &["Bogus"])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "object 'System' has no counter named 'Bogus'"
        );
    }

    #[test]
    fn combine_keeps_the_v1_header() {
        let v1 = snapshot();
        let mut v2 = Snapshot {
            perf_time: 99,
            objects: vec![object(0, "Processor Information").with_values(vec![])],
            ..Default::default()
        };
        let both = combine(Some(v1.clone()), Some(v2.clone()), "X").unwrap();
        assert_eq!(both.system_name, "HOST");
        assert_eq!(both.perf_time, 0);
        assert_eq!(both.objects.len(), 3);
        assert_eq!(
            both.objects[2].name.as_deref(),
            Some("Processor Information")
        );
        // The V1 objects keep the snapshot's clock; the V2 object carries the V2 header's.
        assert_eq!(both.objects[0].sample_clock, None);
        let v2_clock = SampleClock {
            perf_time: 99,
            perf_freq: 0,
            perf_time_100ns: 0,
        };
        assert_eq!(both.objects[2].sample_clock, Some(v2_clock));
        assert_eq!(both.clock_of(&both.objects[2]), v2_clock);
        assert_eq!(both.clock_of(&both.objects[0]), v1.clock());
        // A clock the V2 snapshot already gave its object is kept.
        let mut own = v2.clone();
        let earlier = SampleClock {
            perf_time: 7,
            ..v2_clock
        };
        own.objects[0].sample_clock = Some(earlier);
        let both = combine(Some(v1.clone()), Some(own), "X").unwrap();
        assert_eq!(both.objects[2].sample_clock, Some(earlier));
        let only = combine(None, Some(v2.clone()), "X").unwrap();
        assert_eq!(only.system_name, "X");
        assert_eq!(only.perf_time, 99);
        v2.system_name = "Y".into();
        assert_eq!(combine(None, Some(v2), "X").unwrap().system_name, "Y");
        assert_eq!(combine(Some(v1.clone()), None, "X"), Some(v1));
        assert_eq!(combine(None, None, "X"), None);
    }
}
