//! One collection as the query reads it ([`View`]): an owned [`Snapshot`] or a [`BlockSample`]
//! read in place, behind one interface so that one resolution and one computation serve both.

use crate::format::v1::{BlockField, BlockValues};
use crate::snapshot::{Object, ObjectData, RawValues, SampleClock, Snapshot, Value};
use crate::source::BlockSample;

/// `UniqueID` of instances that are identified by name, and of single-instance values.
pub(super) const PERF_NO_UNIQUE_ID: i32 = -1;

/// One collection as the query reads it: an owned [`Snapshot`] or a [`BlockSample`] read in
/// place. Both give the objects (names, definitions, clocks) and, by position, the instance names
/// and the values, so that one resolution and one computation serve both.
pub(super) trait View {
    /// How the values of one instance are read.
    type Values<'v>: RawValues<Field = Self::Field>
    where
        Self: 'v;
    /// Where a counter's value is in the values of every instance of an object.
    type Field: Copy;

    /// The objects, in the order positions refer to.
    fn objects(&self) -> &[Object];
    /// The collection's clock ([`Snapshot::clock`]).
    fn clock(&self) -> SampleClock;
    /// The number of instances of object `object`; `None` when it has no instance list.
    fn instance_count(&self, object: usize) -> Option<usize>;
    /// The name of instance `pos` of object `object`.
    fn instance_name(&self, object: usize, pos: usize) -> Option<&str>;
    /// The values of instance `instance` of object `object` (`None`: the single-instance
    /// values) and the instance's `unique_id`; `None` when there are no such values.
    fn values(&self, object: usize, instance: Option<usize>) -> Option<(Self::Values<'_>, i32)>;
    /// Where counter `counter` of object `object` is in each of the object's values.
    fn field(&self, object: usize, counter: usize) -> Self::Field;
    /// An id of object `object`'s instance names, the same in two views only when the names are
    /// the same; `None` when the view cannot tell (an owned snapshot).
    #[inline]
    fn names_id(&self, _object: usize) -> Option<u64> {
        None
    }
}

impl View for Snapshot {
    #[inline]
    fn objects(&self) -> &[Object] {
        &self.objects
    }

    #[inline]
    fn clock(&self) -> SampleClock {
        Snapshot::clock(self)
    }

    #[inline]
    fn instance_count(&self, object: usize) -> Option<usize> {
        match &self.objects.get(object)?.data {
            ObjectData::Instances(list) => Some(list.len()),
            _ => None,
        }
    }

    #[inline]
    fn instance_name(&self, object: usize, pos: usize) -> Option<&str> {
        match &self.objects.get(object)?.data {
            ObjectData::Instances(list) => list.get(pos).map(|i| i.name()),
            _ => None,
        }
    }

    type Values<'v> = &'v [Value];
    type Field = usize;

    #[inline]
    fn field(&self, _object: usize, counter: usize) -> usize {
        counter
    }

    #[inline]
    fn values(&self, object: usize, instance: Option<usize>) -> Option<(&[Value], i32)> {
        match (&self.objects.get(object)?.data, instance) {
            (ObjectData::Single(v), None) => Some((v.as_slice(), PERF_NO_UNIQUE_ID)),
            (ObjectData::Instances(list), Some(pos)) => {
                list.get(pos).map(|i| (i.values(), i.unique_id))
            }
            _ => None,
        }
    }
}

impl View for BlockSample<'_> {
    #[inline]
    fn objects(&self) -> &[Object] {
        BlockSample::objects(self)
    }

    #[inline]
    fn clock(&self) -> SampleClock {
        BlockSample::clock(self)
    }

    #[inline]
    fn instance_count(&self, object: usize) -> Option<usize> {
        BlockSample::instance_count(self, object)
    }

    #[inline]
    fn instance_name(&self, object: usize, pos: usize) -> Option<&str> {
        BlockSample::instance_name(self, object, pos)
    }

    type Values<'v>
        = BlockValues<'v>
    where
        Self: 'v;
    type Field = BlockField;

    #[inline]
    fn field(&self, object: usize, counter: usize) -> BlockField {
        BlockSample::field(self, object, counter)
    }

    #[inline]
    fn names_id(&self, object: usize) -> Option<u64> {
        BlockSample::names_id(self, object)
    }

    #[inline]
    fn values(&self, object: usize, instance: Option<usize>) -> Option<(BlockValues<'_>, i32)> {
        BlockSample::values(self, object, instance)
    }
}
