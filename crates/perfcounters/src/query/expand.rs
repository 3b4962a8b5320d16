//! Expansion: an added path, wildcards and all, turned into the concrete counters a snapshot holds,
//! step by step: the objects it names, their counters it selects, their instances it matches; or
//! into one counter whose column reports why it names nothing (with close names).

use crate::counter_type::CounterType;
use crate::names::NameTable;
use crate::path::{format_instance, CounterPath};
use crate::snapshot::{instance_name, Instance, Object, ObjectData, Snapshot};
use crate::suggest::suggest;

use super::counter::QueryCounter;
use super::error::ExpandError;

/// What expansion knows beyond the snapshot, from the catalog
/// ([`Query::request`](super::Query::request)).
pub(super) struct Names<'a> {
    /// Names in the machine's language by title index.
    pub(super) local: &'a NameTable,
    /// Close names for an object the catalog does not list.
    pub(super) object_hint: Option<&'a [String]>,
}

impl Names<'_> {
    /// The names of title index `index` in the machine's language (none for index 0).
    fn local_names(&self, index: u32) -> impl Iterator<Item = &str> + '_ {
        self.local.names(index).filter(move |_| index != 0)
    }
}

/// One object an added path names, and how the path spells it: its English (data) name, or the
/// name in the machine's language that the path used.
struct Named<'s> {
    pos: usize,
    object: &'s Object,
    label: String,
    local: bool,
}

/// A counter of an object that a path selects: its position in the object's definitions, its
/// name in the data, and its name as the column shows it.
type Selected<'s> = (usize, &'s str, &'s str);

/// Expands added path `pattern` (the `origin`th) against `snapshot` into `out`: one counter per
/// object, counter and instance it matches, in data order, with `machine` as the machine of a
/// path that names none; or, where the path names nothing, one counter whose error says why.
pub(super) fn expand_one(
    snapshot: &Snapshot,
    machine: Option<&str>,
    (origin, pattern): (usize, &CounterPath),
    names: &Names<'_>,
    out: &mut Vec<QueryCounter>,
) {
    let expansion = Expansion::new(origin, pattern, machine);
    let objects = matching_objects(snapshot, pattern, names);
    if objects.is_empty() {
        out.push(expansion.no_object(snapshot, names));
        return;
    }
    for named in &objects {
        expansion.object(named, names, out);
    }
}

/// The objects of `snapshot` that `pattern` names, in data order, by their English (data) name or
/// by a name in the machine's language; an English name wins over a name in the machine's language.
fn matching_objects<'s>(
    snapshot: &'s Snapshot,
    pattern: &CounterPath,
    names: &Names<'_>,
) -> Vec<Named<'s>> {
    let mut objects: Vec<Named<'s>> = Vec::new();
    for (pos, object) in snapshot.objects.iter().enumerate() {
        let Some(name) = object.name.as_deref() else {
            continue;
        };
        let (label, local) = if pattern.matches_object(name) {
            (name, false)
        } else {
            match names
                .local_names(object.index)
                .find(|n| pattern.matches_object(n))
            {
                Some(local) => (local, true),
                None => continue,
            }
        };
        objects.push(Named {
            pos,
            object,
            label: label.to_owned(),
            local,
        });
    }
    if objects.iter().any(|o| !o.local) {
        objects.retain(|o| !o.local);
    }
    objects
}

/// The displayable counters of object `named` that `pattern` selects, in data order, each with the
/// name its column shows: a path that names the object in the machine's language shows counters in
/// it, a path that names it in English shows them in English (when the path's counter part matches
/// that name).
fn selected_counters<'s>(
    named: &Named<'s>,
    pattern: &CounterPath,
    names: &'s Names<'_>,
) -> Vec<Selected<'s>> {
    named
        .object
        .counters
        .iter()
        .enumerate()
        .filter(|(_, d)| d.counter_type.is_displayable())
        .filter_map(|(i, d)| {
            let name = d.name.as_deref()?;
            let english = pattern.matches_counter(name).then_some(name);
            let local = names
                .local_names(d.index)
                .find(|n| pattern.matches_counter(n));
            let label = if named.local {
                local.or(english)
            } else {
                english.or(local)
            };
            label.map(|l| (i, name, l))
        })
        .collect()
}

/// One added path being expanded: what every counter it gives shares.
struct Expansion<'p> {
    /// Which added path it is (0-based).
    origin: usize,
    pattern: &'p CounterPath,
    /// The path as added, which the errors show.
    text: String,
    /// The path with the snapshot's machine when it names none.
    concrete: CounterPath,
}

impl<'p> Expansion<'p> {
    fn new(origin: usize, pattern: &'p CounterPath, machine: Option<&str>) -> Self {
        let mut concrete = pattern.clone();
        if concrete.machine.is_none() {
            concrete.machine = machine.map(str::to_string);
        }
        Expansion {
            origin,
            pattern,
            text: pattern.to_string(),
            concrete,
        }
    }

    /// A counter whose column reports `error`, with the path as added; `instance` is the name of
    /// the instance it waits for, if any.
    fn failed(&self, error: ExpandError, instance: Option<String>) -> QueryCounter {
        QueryCounter {
            path: self.concrete.clone(),
            origin: self.origin,
            error: Some(error),
            counter_type: CounterType::PERF_COUNTER_NODATA,
            object: self.pattern.object.clone(),
            counter: self.pattern.counter.clone(),
            instance,
            object_pos: 0,
            counter_pos: 0,
            instance_pos: 0,
        }
    }

    /// The counter of a path that names no object of `snapshot`, with the catalog's close names
    /// when [`Names::object_hint`] has them, else the snapshot's.
    fn no_object(&self, snapshot: &Snapshot, names: &Names<'_>) -> QueryCounter {
        let suggestions = match names.object_hint {
            Some(hint) => hint.to_vec(),
            None => suggest(
                &self.pattern.object,
                snapshot.objects.iter().filter_map(|o| o.name.as_deref()),
            ),
        };
        self.failed(
            ExpandError::NoObject {
                path: self.text.clone(),
                object: self.pattern.object.clone(),
                suggestions,
            },
            None,
        )
    }

    /// The counters of object `named` into `out`: one per selected counter and matching
    /// instance, counter by counter, or those that report what the path names that the object
    /// lacks.
    fn object(&self, named: &Named<'_>, names: &Names<'_>, out: &mut Vec<QueryCounter>) {
        let counters = selected_counters(named, self.pattern, names);
        if counters.is_empty() {
            out.push(self.no_counter(named, names));
            return;
        }
        let data_object = named.object.name.clone().unwrap_or_default();
        let instances = self.instances(named, &data_object, &counters, out);
        for counter in &counters {
            for &instance in &instances {
                out.push(self.counter(named, &data_object, counter, instance));
            }
        }
    }

    /// The counter of a path that selects no counter of object `named`, with close counter names
    /// (in the machine's language too when the path names the object in it).
    fn no_counter(&self, named: &Named<'_>, names: &Names<'_>) -> QueryCounter {
        let counters = &named.object.counters;
        let english = counters
            .iter()
            .filter(|d| !d.counter_type.is_base())
            .filter_map(|d| d.name.as_deref());
        let local = counters
            .iter()
            .filter(|d| named.local && !d.counter_type.is_base())
            .flat_map(|d| names.local_names(d.index));
        self.failed(
            ExpandError::NoCounter {
                path: self.text.clone(),
                object: named.label.clone(),
                counter: self.pattern.counter.clone(),
                suggestions: suggest(&self.pattern.counter, local.chain(english)),
            },
            None,
        )
    }

    /// The instances of object `named` (whose data name is `data_object`) that the path matches,
    /// in data order, as positions and instances (`None`: the values of a single-instance object).
    /// None when the path's instance part does not fit the object, or matches none of its
    /// instances: the counters of `counters` that report it are then in `out`.
    fn instances<'s>(
        &self,
        named: &Named<'s>,
        data_object: &str,
        counters: &[Selected<'_>],
        out: &mut Vec<QueryCounter>,
    ) -> Vec<(usize, Option<&'s Instance>)> {
        let pattern = self.pattern;
        let mismatch = |instance: String| ExpandError::NoInstance {
            path: self.text.clone(),
            object: named.label.clone(),
            instance,
            suggestions: Vec::new(),
        };
        match &named.object.data {
            ObjectData::Single(_) => {
                if pattern.instance.is_some() && pattern.instance.as_deref() != Some("*") {
                    let instance = format!(
                        "\"{}\" (it is a single-instance object)",
                        instance_text(pattern)
                    );
                    out.push(self.failed(mismatch(instance), None));
                    return Vec::new();
                }
                vec![(0, None)]
            }
            ObjectData::Instances(list) => {
                if pattern.instance.is_none() {
                    let instance = "(none given; this object has instances, e.g. (*))".to_string();
                    out.push(self.failed(mismatch(instance), None));
                    return Vec::new();
                }
                let matched: Vec<(usize, Option<&Instance>)> = list
                    .iter()
                    .enumerate()
                    .filter(|(_, i)| pattern.matches_instance(i.parent(), i.raw_name(), i.index))
                    .map(|(pos, i)| (pos, Some(i)))
                    .collect();
                if matched.is_empty() {
                    self.no_instance_yet(named, data_object, list, counters, out);
                }
                matched
            }
            ObjectData::MetadataOnly { .. } => Vec::new(),
        }
    }

    /// The counters of a path whose instance part matches none of the instances `list` of object
    /// `named`: a concrete instance that does not exist now, or a wildcard that matches no
    /// instance yet (`\Process(firefox*)\…` before it starts). Each selected counter is kept, with
    /// the path as written; it reports `PDH_CSTATUS_NO_INSTANCE` until the instance appears (a
    /// wildcard's matches, at the next expansion).
    fn no_instance_yet(
        &self,
        named: &Named<'_>,
        data_object: &str,
        list: &[Instance],
        counters: &[Selected<'_>],
        out: &mut Vec<QueryCounter>,
    ) {
        let pattern = self.pattern;
        let wildcard = pattern.has_instance_wildcard();
        let names = list.iter().map(|i| i.name());
        // The name the instance will have when it appears.
        let name = instance_name(
            pattern.parent.as_deref(),
            pattern.instance.as_deref().unwrap_or_default(),
            pattern.index.unwrap_or(0),
        );
        let (missing, suggestions) = if wildcard {
            (
                format!("matching \"{}\" yet", instance_text(pattern)),
                Vec::new(),
            )
        } else {
            (
                format!("\"{}\"", instance_text(pattern)),
                suggest(&instance_text(pattern), names.clone()),
            )
        };
        for (counter_pos, data_counter, counter_name) in counters {
            let mut p = self.concrete.clone();
            p.object = named.label.clone();
            p.counter = (*counter_name).to_string();
            let mut qc = self.failed(
                ExpandError::NoInstance {
                    path: self.text.clone(),
                    object: named.label.clone(),
                    instance: missing.clone(),
                    suggestions: suggestions.clone(),
                },
                Some(name.clone()),
            );
            qc.path = p;
            qc.object = data_object.to_owned();
            qc.counter = (*data_counter).to_string();
            qc.counter_type = named.object.counters[*counter_pos].counter_type;
            qc.object_pos = named.pos;
            qc.counter_pos = *counter_pos;
            out.push(qc);
        }
    }

    /// The counter `counter` of object `named` (whose data name is `data_object`) in instance
    /// `instance` at its position (`None`: the object's single-instance values).
    fn counter(
        &self,
        named: &Named<'_>,
        data_object: &str,
        &(counter_pos, data_counter, counter_name): &Selected<'_>,
        (instance_pos, instance): (usize, Option<&Instance>),
    ) -> QueryCounter {
        let mut p = self.concrete.clone();
        p.object = named.label.clone();
        p.counter = counter_name.to_string();
        p.parent = instance.and_then(|i| i.parent().map(str::to_owned));
        p.instance = instance.map(|i| i.raw_name().to_owned());
        p.index = instance.and_then(|i| (i.index > 0).then_some(i.index));
        QueryCounter {
            path: p,
            origin: self.origin,
            error: None,
            counter_type: named.object.counters[counter_pos].counter_type,
            object: data_object.to_owned(),
            counter: data_counter.to_string(),
            instance: instance.map(|i| i.name().to_owned()),
            object_pos: named.pos,
            counter_pos,
            instance_pos,
        }
    }
}

/// The instance part of path `p` as a path spells it (`parent/name#index`).
fn instance_text(p: &CounterPath) -> String {
    format_instance(
        p.parent.as_deref(),
        p.instance.as_deref().unwrap_or_default(),
        p.index,
    )
}
