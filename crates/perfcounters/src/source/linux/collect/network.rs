//! The Network Interface object: `/proc/net/dev`.

use super::{instance, values, wants};
use crate::snapshot::{Object, ObjectData};
use crate::source::linux::defs::{Key, ObjDef, Row};
use crate::source::linux::parse;
use crate::source::linux::{build_object, LinuxSource};
use crate::source::SourceError;

impl LinuxSource {
    pub(super) fn network(&mut self, def: &ObjDef, rows: &[&Row]) -> Result<Object, SourceError> {
        let ifaces = self.read_proc("net/dev", parse::net_dev)?;
        let need_speed = wants(rows, &[Key::NetBandwidth]);
        let mut out = Vec::with_capacity(ifaces.len());
        for n in ifaces {
            let speed = if need_speed {
                let path = self.sys_dir.join("class/net").join(&n.name).join("speed");
                match self.read_parse(&path, parse::single_i64) {
                    Ok(mbps) if mbps > 0 => (mbps as u64).saturating_mul(1_000_000),
                    _ => 0, // unknown speed (virtual interface, link down)
                }
            } else {
                0
            };
            let vals = values(rows, |k| match k {
                Key::NetBytesTotal => n.rx_bytes.saturating_add(n.tx_bytes),
                Key::NetBytesRx => n.rx_bytes,
                Key::NetBytesTx => n.tx_bytes,
                Key::NetPackets => n.rx_packets.saturating_add(n.tx_packets),
                Key::NetPacketsRx => n.rx_packets,
                Key::NetPacketsTx => n.tx_packets,
                Key::NetBandwidth => speed,
                Key::NetRxErrors => n.rx_errs,
                Key::NetTxErrors => n.tx_errs,
                Key::NetRxDiscards => n.rx_drop,
                Key::NetTxDiscards => n.tx_drop,
                _ => 0,
            });
            out.push(instance(n.name, -1, vals));
        }
        Ok(build_object(def, rows, None, ObjectData::Instances(out)))
    }
}
