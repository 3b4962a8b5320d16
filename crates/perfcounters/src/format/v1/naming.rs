//! Instance names as PDH shows them: `parent/child`, then `#n` for duplicates.

use std::collections::HashMap;

use crate::snapshot::{ObjectData, Snapshot};

/// Fills [`Instance::name`](crate::snapshot::Instance::name) and
/// [`Instance::parent`](crate::snapshot::Instance::parent) of every instance from its `raw_name`,
/// `parent_object` and `parent_instance`:
///
/// 1. When `parent_object` ≠ 0 and the first object of the snapshot with that title index has an
///    instance at position `parent_instance`, the parent is that instance's **raw** name and the full
///    name is `parent/raw_name`. Otherwise the full name is the raw name, `parent` is `None`, and the
///    two numbers stay as recorded.
/// 2. Instances whose full names are equal (compared exactly) within one object are numbered in data
///    order: the first keeps the name, the second gets `#1`, the third `#2`, and so on.
///
/// ```
/// # use perfcounters::snapshot::*;
/// # use perfcounters::format::v1::resolve_instance_names;
/// let inst = |raw: &str| Instance { raw_name: raw.into(), unique_id: -1, ..Default::default() };
/// let mut snap = Snapshot::default();
/// snap.objects.push(Object {
///     index: 230, name: None, help_index: 231, detail_level: 100, default_counter: -1,
///     code_page: 0, perf_time: 0, perf_freq: 0, counters: vec![],
///     data: ObjectData::Instances(vec![inst("svchost"), inst("svchost"), inst("svchost")]),
/// });
/// resolve_instance_names(&mut snap);
/// let names: Vec<_> = snap.objects[0].instances().iter().map(|i| i.name.as_str()).collect();
/// assert_eq!(names, ["svchost", "svchost#1", "svchost#2"]);
/// ```
pub fn resolve_instance_names(snapshot: &mut Snapshot) {
    let parents: Vec<Vec<Option<String>>> = snapshot
        .objects
        .iter()
        .map(|object| {
            object
                .instances()
                .iter()
                .map(|inst| {
                    if inst.parent_object == 0 {
                        return None;
                    }
                    let parent = snapshot.object_by_index(inst.parent_object)?;
                    let position = usize::try_from(inst.parent_instance).ok()?;
                    parent.instances().get(position).map(|p| p.raw_name.clone())
                })
                .collect()
        })
        .collect();
    for (object, parents) in snapshot.objects.iter_mut().zip(parents) {
        let ObjectData::Instances(instances) = &mut object.data else {
            continue;
        };
        let mut seen: HashMap<String, u32> = HashMap::with_capacity(instances.len());
        for (inst, parent) in instances.iter_mut().zip(parents) {
            let full = match &parent {
                Some(p) => format!("{p}/{}", inst.raw_name),
                None => inst.raw_name.clone(),
            };
            let count = seen.entry(full.clone()).or_insert(0);
            inst.name = if *count == 0 {
                full
            } else {
                format!("{full}#{count}")
            };
            *count = count.saturating_add(1);
            inst.parent = parent;
        }
    }
}
