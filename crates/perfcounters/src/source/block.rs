//! A collection read in place from a V1 block ([`BlockSample`]), without the owned snapshot.
//!
//! A [`BlockReader`] validates a block exactly as [`PerfDataBlock::to_snapshot`] does (every
//! object, definition, instance, name code page and counter block, in the same order, so a bad
//! block gives the same [`DecodeError`]), records where each instance and counter block lies, and
//! then selects the requested objects by the rules of the owned path
//! ([`super::snapshots::present_objects`],
//! [`super::snapshots::select_positions`]). Instances are named by the one rule
//! ([`crate::snapshot::name_instances`], parents as
//! [`resolve_instance_names`](crate::format::v1::resolve_instance_names) finds them); the names of
//! an object are kept with a fingerprint of what they were made from (code page, byte order, each
//! instance's raw name bytes and parent reference, and once per parent object its raw names), so
//! a block whose instance layout did not change reuses them after one byte comparison.

use super::snapshots::{present_objects, select_positions};
use super::{Catalog, Request, SourceError};
use crate::format::v1::{
    instance_name_into, owned_definitions, parent_name, BlockField, BlockValues,
    PerfCounterDefinition, PerfDataBlock, ValueLayout, PERF_METADATA_MULTIPLE_INSTANCES,
    PERF_METADATA_NO_INSTANCES, PERF_NO_INSTANCES, PERF_NO_UNIQUE_ID,
};
use crate::format::{DecodeError, Endian};
use crate::names::NameTable;
use crate::path::eq_ignore_case;
use crate::snapshot::{
    name_instances, Instance, Object, ObjectData, SampleClock, Span, SystemTime,
};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where one instance of the last block lies (absolute byte ranges) and what naming needs.
#[derive(Clone, Copy, Debug)]
struct InstanceRec {
    /// Offset of the `PERF_INSTANCE_DEFINITION` (for errors).
    offset: usize,
    name: (usize, usize),
    block: (usize, usize),
    parent_object: u32,
    parent_instance: u32,
    unique_id: i32,
}

/// The data of one object of the last block.
#[derive(Clone, Copy, Debug)]
enum RecData {
    /// A single-instance object's counter block (start, length).
    Single(usize, usize),
    /// Instances `first..first + count` of [`BlockReader::instances`].
    Instances { first: usize, count: usize },
    /// No data (metadata only).
    None,
}

#[derive(Clone, Copy, Debug)]
struct ObjectRec {
    index: u32,
    code_page: u32,
    data: RecData,
}

/// The instance names of one object and what they were made from.
#[derive(Clone, Debug, Default)]
struct NamedLayout {
    index: u32,
    fingerprint: Vec<u8>,
    /// The names one after the other, name `i` at `spans[i]`: a query that looks its instances
    /// up again reads them in one pass.
    names: String,
    spans: Vec<Span>,
    /// Unique to these names among every layout of the process ([`next_names_id`]).
    id: u64,
}

/// A new id for names made anew, so that a query seeing the same id twice knows the instance
/// names did not change ([`BlockSample::names_id`]).
fn next_names_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Reads V1 blocks in place into [`BlockSample`]s, keeping its buffers and the instance names of
/// the last block from one collection to the next. A source that reads V1 blocks owns one.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockReader {
    objects: Vec<ObjectRec>,
    instances: Vec<InstanceRec>,
    named: Vec<NamedLayout>,
    scratch: Vec<u8>,
    name: String,
    endian: Option<Endian>,
}

impl BlockReader {
    /// Validates `bytes` as [`PerfDataBlock::to_snapshot`] would, the first error being the same,
    /// and records the block's objects and instances.
    pub(crate) fn validate(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        self.objects.clear();
        self.instances.clear();
        self.endian = None;
        let block = PerfDataBlock::parse(bytes)?;
        let mut defs: Vec<PerfCounterDefinition<'_>> = Vec::new();
        for object in block.objects() {
            let object = object?;
            defs.clear();
            for d in object.counters() {
                defs.push(d?);
            }
            let layout = ValueLayout::new(&defs);
            let data = match object.num_instances() {
                PERF_NO_INSTANCES => match object.counter_block()? {
                    Some(cb) => {
                        cb.values_of(&layout)?;
                        RecData::Single(cb.buffer_offset(), cb.as_bytes().len())
                    }
                    // `counter_block` gives a block or an error for a single-instance object.
                    None => RecData::None,
                },
                PERF_METADATA_MULTIPLE_INSTANCES | PERF_METADATA_NO_INSTANCES => RecData::None,
                _ => {
                    let first = self.instances.len();
                    for inst in object.instances() {
                        let inst = inst?;
                        if object.code_page() != 0 && self.instances.len() == first {
                            // Decoding fails for every name of the object or for none.
                            inst.name_into(&mut self.name)?;
                        }
                        let cb = inst.counter_block();
                        cb.values_of(&layout)?;
                        let name_start = inst
                            .buffer_offset()
                            .saturating_add(inst.name_offset() as usize);
                        let name_len = inst.name_bytes().len();
                        self.instances.push(InstanceRec {
                            offset: inst.buffer_offset(),
                            name: (if name_len == 0 { 0 } else { name_start }, name_len),
                            block: (cb.buffer_offset(), cb.as_bytes().len()),
                            parent_object: inst.parent_object_title_index(),
                            parent_instance: inst.parent_object_instance(),
                            unique_id: inst.unique_id(),
                        });
                    }
                    RecData::Instances {
                        first,
                        count: self.instances.len() - first,
                    }
                }
            };
            self.objects.push(ObjectRec {
                index: object.name_index(),
                code_page: object.code_page(),
                data,
            });
        }
        block.system_name_bytes()?;
        self.endian = Some(block.endian());
        Ok(())
    }

    /// The sample of the requested objects of the block `validate` accepted (the same `bytes`):
    /// objects and counters named from `names` as [`NameTable::apply`] names them, selected as a
    /// replay selects them from the owned snapshot (`catalog` decides which missing objects are
    /// errors), instances named.
    pub(crate) fn sample<'s>(
        &'s mut self,
        bytes: &'s [u8],
        names: &NameTable,
        request: &Request,
        catalog: &Catalog,
        decode: impl Fn(DecodeError) -> SourceError,
    ) -> Result<BlockSample<'s>, SourceError> {
        let block = PerfDataBlock::parse(bytes).map_err(&decode)?;
        // The objects whose names the request may select, with their definitions.
        let wanted = |name: Option<&str>| {
            name.is_some_and(|n| request.objects.iter().any(|w| eq_ignore_case(&w.object, n)))
        };
        let mut shells: Vec<Object> = Vec::new();
        let mut shell_of: Vec<(usize, ValueLayout<'s>)> = Vec::new();
        for (pos, object) in block.objects().enumerate() {
            let object = object.map_err(&decode)?;
            let index = object.name_index();
            if index == 0 || !wanted(names.name(index)) {
                continue;
            }
            let defs: Vec<PerfCounterDefinition<'s>> = object
                .counters()
                .collect::<Result<_, _>>()
                .map_err(&decode)?;
            let multiple = !matches!(
                self.objects.get(pos).map(|o| o.data),
                Some(RecData::Single(..))
            );
            let mut shell = object.owned_with(
                owned_definitions(&defs),
                // A shell: the data stays in the block.
                ObjectData::MetadataOnly {
                    multiple_instances: multiple,
                },
            );
            names.apply_to_object(&mut shell);
            shells.push(shell);
            shell_of.push((pos, ValueLayout::new(&defs)));
        }
        let present = present_objects(&shells, request, catalog)?;
        let selected = select_positions(&shells, &present)?;
        let mut data = Vec::with_capacity(selected.len());
        for &s in &selected {
            let (pos, _) = &shell_of[s];
            let rec = self.objects.get(*pos).map_or(
                ObjectRec {
                    index: 0,
                    code_page: 0,
                    data: RecData::None,
                },
                |r| *r,
            );
            let named = match rec.data {
                RecData::Instances { .. } => Some(self.name_object(bytes, *pos).map_err(&decode)?),
                _ => None,
            };
            data.push((rec.data, named));
        }
        let mut objects = Vec::with_capacity(selected.len());
        let mut parts = Vec::with_capacity(selected.len());
        let mut shells: Vec<Option<Object>> = shells.into_iter().map(Some).collect();
        let mut layouts: Vec<Option<ValueLayout<'s>>> =
            shell_of.into_iter().map(|(_, l)| Some(l)).collect();
        for (&s, (rec, named)) in selected.iter().zip(data) {
            let (Some(shell), Some(layout)) = (shells[s].take(), layouts[s].take()) else {
                continue;
            };
            objects.push(shell);
            parts.push(Part {
                data: rec,
                named,
                layout,
            });
        }
        Ok(BlockSample {
            bytes: block.as_bytes(),
            endian: block.endian(),
            clock: SampleClock {
                perf_time: block.perf_time(),
                perf_freq: block.perf_freq(),
                perf_time_100ns: block.perf_time_100ns(),
            },
            system_time: block.system_time(),
            objects,
            parts,
            instances: &self.instances,
            named: &self.named,
        })
    }

    /// The position in [`BlockReader::named`] of the names of object `pos`'s instances in the
    /// block `bytes`: the previous names when the fingerprint did not change, else named anew.
    fn name_object(&mut self, bytes: &[u8], pos: usize) -> Result<usize, DecodeError> {
        let endian = self.endian.unwrap_or(Endian::Little);
        let Some(&ObjectRec {
            index,
            code_page,
            data: RecData::Instances { first, count },
        }) = self.objects.get(pos)
        else {
            return Ok(usize::MAX);
        };
        let objects = &self.objects;
        let instances = self.instances.get(first..first + count).unwrap_or_default();
        let slice = |(start, len): (usize, usize)| {
            bytes
                .get(start..start.saturating_add(len))
                .unwrap_or_default()
        };
        // The parent instance of `inst` and its object's code page, by the rule of
        // `resolve_instance_names`.
        let parent_of = |inst: &InstanceRec| -> Option<(u32, InstanceRec)> {
            parent_name(
                inst.parent_object,
                inst.parent_instance,
                |index, position| {
                    let parent = objects.iter().find(|o| o.index == index)?;
                    let RecData::Instances { first, count } = parent.data else {
                        return None;
                    };
                    let rec = (position < count)
                        .then(|| self.instances.get(first + position))
                        .flatten()?;
                    Some((parent.code_page, *rec))
                },
            )
        };
        // What the names are made of: the byte order, the code page, each raw name and its
        // parent reference, then once per parent object its code page and raw names (what
        // `parent_of` reads), rather than the parent's name again for each child.
        let fingerprint = &mut self.scratch;
        fingerprint.clear();
        fingerprint.push(u8::from(endian == Endian::Big));
        fingerprint.extend_from_slice(&code_page.to_le_bytes());
        fingerprint.extend_from_slice(&(count as u64).to_le_bytes());
        let mut parents: Vec<u32> = Vec::new();
        for inst in instances {
            let name = slice(inst.name);
            fingerprint.extend_from_slice(&(name.len() as u64).to_le_bytes());
            fingerprint.extend_from_slice(name);
            fingerprint.extend_from_slice(&inst.parent_object.to_le_bytes());
            fingerprint.extend_from_slice(&inst.parent_instance.to_le_bytes());
            if inst.parent_object != 0 && !parents.contains(&inst.parent_object) {
                parents.push(inst.parent_object);
            }
        }
        for parent in parents {
            match objects.iter().find(|o| o.index == parent) {
                Some(&ObjectRec {
                    code_page,
                    data: RecData::Instances { first, count },
                    ..
                }) => {
                    fingerprint.push(1);
                    fingerprint.extend_from_slice(&code_page.to_le_bytes());
                    fingerprint.extend_from_slice(&(count as u64).to_le_bytes());
                    for inst in self.instances.get(first..first + count).unwrap_or_default() {
                        let name = slice(inst.name);
                        fingerprint.extend_from_slice(&(name.len() as u64).to_le_bytes());
                        fingerprint.extend_from_slice(name);
                    }
                }
                _ => fingerprint.push(0),
            }
        }
        let cached = self.named.iter().position(|n| n.index == index);
        if let Some(i) = cached {
            if self.named[i].fingerprint == *fingerprint {
                return Ok(i);
            }
        }
        // Named anew, by the one rule.
        let mut list: Vec<Instance> = Vec::with_capacity(count);
        for inst in instances {
            let mut raw_name = String::new();
            instance_name_into(
                slice(inst.name),
                endian,
                code_page,
                inst.offset,
                &mut raw_name,
            )?;
            let parent = match parent_of(inst) {
                Some((parent_code_page, parent)) => {
                    let mut name = String::new();
                    instance_name_into(
                        slice(parent.name),
                        endian,
                        parent_code_page,
                        parent.offset,
                        &mut name,
                    )?;
                    Some(name)
                }
                None => None,
            };
            let inst = Instance::new(raw_name, Vec::new());
            list.push(match parent {
                Some(parent) => inst.with_parent(parent),
                None => inst,
            });
        }
        name_instances(&mut list);
        let mut names = String::with_capacity(list.iter().map(|i| i.name().len()).sum());
        let spans = list
            .iter()
            .map(|i| {
                let start = names.len();
                names.push_str(i.name());
                Span::since(start, &names)
            })
            .collect();
        let layout = NamedLayout {
            id: next_names_id(),
            index,
            fingerprint: std::mem::take(fingerprint),
            names,
            spans,
        };
        Ok(match cached {
            Some(i) => {
                // The old fingerprint's buffer is reused for the next comparison.
                self.scratch = std::mem::replace(&mut self.named[i], layout).fingerprint;
                i
            }
            None => {
                self.named.push(layout);
                self.named.len() - 1
            }
        })
    }
}

/// One selected object of a [`BlockSample`]: where its data is and how its counter blocks are laid
/// out.
#[derive(Clone, Debug)]
struct Part<'s> {
    data: RecData,
    /// Position of the instance names in [`BlockReader::named`].
    named: Option<usize>,
    layout: ValueLayout<'s>,
}

/// One collection read in place from a V1 block: the requested objects, validated, named and
/// selected exactly as the owned snapshot of the same block would be, their values still in the
/// block's bytes. A query computes its values from it without building a
/// [`Snapshot`](crate::snapshot::Snapshot) ([`crate::query::Query::collect`]).
#[derive(Clone, Debug)]
pub struct BlockSample<'s> {
    bytes: &'s [u8],
    endian: Endian,
    clock: SampleClock,
    system_time: SystemTime,
    /// The selected objects in request order, with their definitions but without data.
    objects: Vec<Object>,
    parts: Vec<Part<'s>>,
    instances: &'s [InstanceRec],
    named: &'s [NamedLayout],
}

impl BlockSample<'_> {
    /// The block's clock (`PerfTime`, `PerfFreq`, `PerfTime100nSec`).
    pub fn clock(&self) -> SampleClock {
        self.clock
    }

    /// The block's `SystemTime` (UTC).
    pub fn system_time(&self) -> SystemTime {
        self.system_time
    }

    /// The selected objects in request order: names, definitions and clocks as the owned snapshot
    /// has them, and no data ([`ObjectData::MetadataOnly`]; the values stay in the block).
    pub fn objects(&self) -> &[Object] {
        &self.objects
    }

    /// The number of instances of object `object`, or `None` when it has no instance list.
    pub(crate) fn instance_count(&self, object: usize) -> Option<usize> {
        match self.parts.get(object)?.data {
            RecData::Instances { count, .. } => Some(count),
            _ => None,
        }
    }

    /// The name of instance `pos` of object `object`, as the owned snapshot names it.
    pub(crate) fn instance_name(&self, object: usize, pos: usize) -> Option<&str> {
        let named = self.named.get(self.parts.get(object)?.named?)?;
        Some(named.spans.get(pos)?.of(&named.names))
    }

    /// An id of the instance names of object `object`: two samples (of any reader) with the same
    /// id have the same names; `None` for an object without instances.
    pub(crate) fn names_id(&self, object: usize) -> Option<u64> {
        let named = self.named.get(self.parts.get(object)?.named?)?;
        Some(named.id)
    }

    /// Where counter `counter` of object `object` is in each of the object's counter blocks
    /// ([`BlockField::NOT_INTEGER`] for a counter the object does not have: never read as a number).
    pub(crate) fn field(&self, object: usize, counter: usize) -> BlockField {
        self.parts
            .get(object)
            .and_then(|part| part.layout.field(counter, self.endian))
            .unwrap_or(BlockField::NOT_INTEGER)
    }

    /// The values of instance `instance` of object `object` (`None`: its single counter block)
    /// and the instance's `UniqueID`; `None` when there is no such data.
    #[inline]
    pub(crate) fn values(
        &self,
        object: usize,
        instance: Option<usize>,
    ) -> Option<(BlockValues<'_>, i32)> {
        let part = self.parts.get(object)?;
        let ((start, len), unique_id) = match (part.data, instance) {
            (RecData::Single(start, len), None) => ((start, len), PERF_NO_UNIQUE_ID),
            (RecData::Instances { first, count }, Some(pos)) if pos < count => {
                let rec = self.instances.get(first + pos)?;
                (rec.block, rec.unique_id)
            }
            _ => return None,
        };
        let bytes = self.bytes.get(start..start.checked_add(len)?)?;
        Some((part.layout.values_in(bytes), unique_id))
    }
}
