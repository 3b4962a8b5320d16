//! V1 performance data blocks (`PERF_DATA_BLOCK`), as returned by
//! `RegQueryValueEx(HKEY_PERFORMANCE_DATA, …)`.
//!
//! * [`PerfDataBlock::parse`] validates the header and gives zero-copy views ([`PerfObjectType`],
//!   [`PerfCounterDefinition`], [`PerfInstanceDefinition`], [`PerfCounterBlock`]) that borrow the buffer; every view
//!   checks its bounds when created and every walk is bounded by the bytes that remain, so hostile data
//!   yields a [`DecodeError`] naming the structure and byte offset, never a panic or an endless loop.
//! * [`PerfDataBlock::to_snapshot`] converts a block into the owned [`Snapshot`](crate::snapshot::Snapshot),
//!   with base counters linked and instances named as PDH shows them ([`resolve_instance_names`]).
//! * [`encode()`] / [`encode_with`] write a snapshot back as a block laid out like Windows does.
//!
//! ```
//! use perfcounters::format::v1::{encode, PerfDataBlock, RawValue};
//! use perfcounters::snapshot::*;
//! use perfcounters::CounterType;
//!
//! let system = Object::new(2)
//!     .with_counters(vec![CounterDefinition {
//!         offset: 4, // after the counter block's ByteLength, as the decoder will find it
//!         ..CounterDefinition::new(250, CounterType::PERF_COUNTER_RAWCOUNT)
//!     }])
//!     .with_values(vec![Value::U32(42)]);
//! let snap = Snapshot::new("HOST").with_objects(vec![system]);
//! let bytes = encode(&snap).unwrap();
//! let block = PerfDataBlock::parse(&bytes).unwrap();
//! assert_eq!(block.system_name().unwrap(), "HOST");
//! let object = block.objects().next().unwrap().unwrap();
//! let def = object.counters().next().unwrap().unwrap();
//! let value = object.counter_block().unwrap().unwrap().value(&def).unwrap();
//! assert_eq!(value, RawValue::U32(42));
//! assert_eq!(block.to_snapshot().unwrap(), snap);
//! ```

mod decode;
mod encode;
mod layout;
mod naming;

pub use crate::format::Endian;
pub use crate::format::{DecodeError, EncodeError};
pub(crate) use decode::{instance_name_into, owned_definitions, BlockField, BlockValues};
pub use decode::{
    Counters, Instances, LayoutValues, Objects, PerfCounterBlock, PerfCounterDefinition,
    PerfDataBlock, PerfInstanceDefinition, PerfObjectType, RawValue, ValueLayout,
    COUNTER_BLOCK_LEN, COUNTER_DEFINITION_LEN, DATA_BLOCK_LEN, INSTANCE_DEFINITION_LEN,
    OBJECT_TYPE_LEN, PERF_METADATA_MULTIPLE_INSTANCES, PERF_METADATA_NO_INSTANCES,
    PERF_NO_INSTANCES, PERF_NO_UNIQUE_ID,
};
pub use encode::{encode, encode_with, layout_counter_block, EncodeOptions};
pub(crate) use naming::parent_name;
pub use naming::resolve_instance_names;
