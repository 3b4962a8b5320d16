//! Instance names as PDH shows them: `parent/child`, then `#n` for duplicates.

use crate::snapshot::{name_instances, Object, ObjectData, Snapshot};

/// Fills [`Instance::parent`](crate::snapshot::Instance::parent) of every instance from its
/// `parent_object` and `parent_instance`, then names the instances of each object with
/// [`name_instances`] (`parent/child`, `#n` for duplicates compared ignoring case):
///
/// * When `parent_object` ≠ 0 and the first object of the snapshot with that title index has an
///   instance at position `parent_instance`, the parent is that instance's **raw** name, so the full
///   name is `parent/raw_name`. Otherwise `parent` is `None`, the full name is the raw name, and the two
///   numbers stay as recorded.
///
/// ```
/// # use perfcounters::snapshot::*;
/// # use perfcounters::format::v1::resolve_instance_names;
/// let inst = |raw: &str| Instance::new(raw, vec![]);
/// let mut snap = Snapshot::default();
/// snap.objects.push(Object {
///     data: ObjectData::Instances(vec![inst("svchost"), inst("svchost"), inst("SvcHost")]),
///     ..Object::new(230)
/// });
/// resolve_instance_names(&mut snap);
/// let names: Vec<_> = snap.objects[0].instances().iter().map(|i| i.name.as_str()).collect();
/// assert_eq!(names, ["svchost", "svchost#1", "SvcHost#2"]);
/// ```
pub fn resolve_instance_names(snapshot: &mut Snapshot) {
    let parents: Vec<Vec<Option<String>>> = snapshot
        .objects
        .iter()
        .map(|object| {
            // The instances of an object nearly always share one parent object: look it up once.
            let mut last: Option<(u32, Option<&Object>)> = None;
            object
                .instances()
                .iter()
                .map(|inst| {
                    parent_name(
                        inst.parent_object,
                        inst.parent_instance,
                        |index, position| {
                            let parent = match last {
                                Some((i, parent)) if i == index => parent,
                                _ => {
                                    let parent = snapshot.object_by_index(index);
                                    last = Some((index, parent));
                                    parent
                                }
                            }?;
                            parent.instances().get(position).map(|p| p.raw_name.clone())
                        },
                    )
                })
                .collect()
        })
        .collect();
    for (object, parents) in snapshot.objects.iter_mut().zip(parents) {
        let ObjectData::Instances(instances) = &mut object.data else {
            continue;
        };
        for (inst, parent) in instances.iter_mut().zip(parents) {
            inst.parent = parent;
        }
        name_instances(instances);
    }
}

/// The parent name of an instance whose `ParentObjectTitleIndex` is `parent_object` and
/// `ParentObjectInstance` is `parent_instance`, by the rule of [`resolve_instance_names`]: none
/// without a parent object (0), else the raw name of the instance at that position of the block's
/// first object with that title index, which `raw_name_at(index, position)` finds.
pub(crate) fn parent_name(
    parent_object: u32,
    parent_instance: u32,
    raw_name_at: impl FnOnce(u32, usize) -> Option<String>,
) -> Option<String> {
    if parent_object == 0 {
        return None;
    }
    let position = usize::try_from(parent_instance).ok()?;
    raw_name_at(parent_object, position)
}
