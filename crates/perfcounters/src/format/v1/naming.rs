//! Instance names as PDH shows them: `parent/child`, then `#n` for duplicates.

use crate::snapshot::{NamedList, ObjectData, Snapshot};

/// Fills [`Instance::parent`](crate::snapshot::Instance::parent) of every instance from its
/// `parent_object` and `parent_instance`, then names the instances of each object with
/// [`name_instances`](crate::snapshot::name_instances) (`parent/child`, `#n` for duplicates compared ignoring case):
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
/// let names: Vec<_> = snap.objects[0].instances().iter().map(|i| i.name()).collect();
/// assert_eq!(names, ["svchost", "svchost#1", "SvcHost#2"]);
/// ```
pub fn resolve_instance_names(snapshot: &mut Snapshot) {
    let indexes: Vec<u32> = snapshot.objects.iter().map(|o| o.index).collect();
    let named: Vec<Option<NamedList>> = snapshot
        .objects
        .iter()
        .map(|object| {
            let ObjectData::Instances(list) = &object.data else {
                return None;
            };
            let mut parents = ParentLookup::new(&indexes);
            Some(NamedList::new(list.iter().map(|inst| {
                let parent = parents.find(inst.parent_object, inst.parent_instance, |o, i| {
                    Some(snapshot.objects.get(o)?.instances().get(i)?.raw_name())
                });
                (parent, inst.raw_name())
            })))
        })
        .collect();
    for (object, named) in snapshot.objects.iter_mut().zip(named) {
        if let (ObjectData::Instances(list), Some(named)) = (&mut object.data, named) {
            named.rename(list);
        }
    }
}

/// Finds the parents of many instances by [`parent_name`], remembering the last parent object.
pub(crate) struct ParentLookup<'a> {
    /// The title index of each object, in data order.
    indexes: &'a [u32],
    /// The last object looked up: the instances of an object nearly always share one parent object.
    last: Option<(u32, Option<usize>)>,
}

impl<'a> ParentLookup<'a> {
    /// A lookup among objects with these title indexes, in data order.
    pub(crate) fn new(indexes: &'a [u32]) -> Self {
        ParentLookup {
            indexes,
            last: None,
        }
    }

    /// The raw name of the parent; `raw_name(object, position)` gives the raw name of the
    /// instance at `position` of the object at `object` (positions in data order).
    pub(crate) fn find<'n>(
        &mut self,
        parent_object: u32,
        parent_instance: u32,
        raw_name: impl FnOnce(usize, usize) -> Option<&'n str>,
    ) -> Option<&'n str> {
        parent_name(parent_object, parent_instance, |index, position| {
            let object = match self.last {
                Some((last, object)) if last == index => object,
                _ => {
                    let object = self.indexes.iter().position(|&i| i == index);
                    self.last = Some((index, object));
                    object
                }
            }?;
            raw_name(object, position)
        })
    }
}

/// The parent name of an instance whose `ParentObjectTitleIndex` is `parent_object` and
/// `ParentObjectInstance` is `parent_instance`, by the rule of [`resolve_instance_names`]: none
/// without a parent object (0), else the raw name of the instance at that position of the block's
/// first object with that title index, which `raw_name_at(index, position)` finds.
pub(crate) fn parent_name<N>(
    parent_object: u32,
    parent_instance: u32,
    raw_name_at: impl FnOnce(u32, usize) -> Option<N>,
) -> Option<N> {
    if parent_object == 0 {
        return None;
    }
    let position = usize::try_from(parent_instance).ok()?;
    raw_name_at(parent_object, position)
}
