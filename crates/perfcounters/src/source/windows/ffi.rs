//! The Windows system calls behind [`PerfRegistry`] and [`PerfLibApi`]: each wrapper converts its
//! arguments, makes one call and returns the status. Everything else (buffer growth, retries,
//! decoding) is in the portable modules.
//!
//! The PerfLib V2 consumer functions are resolved from `advapi32.dll` at run time with
//! `GetProcAddress`, not imported: a system that lacks one of them (Wine lacks
//! `PerfEnumerateCounterSet` and aborts the process when an unresolved import is called) is then
//! reported as "V2 unavailable" instead of being called.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use windows_sys::core::GUID;
use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress, LoadLibraryW};
use windows_sys::Win32::System::Registry::{
    RegCloseKey, RegQueryValueExW, HKEY, HKEY_PERFORMANCE_DATA, HKEY_PERFORMANCE_NLSTEXT,
    HKEY_PERFORMANCE_TEXT,
};

use super::codes::ERROR_CALL_NOT_IMPLEMENTED;
use super::grow::Filled;
use super::perflib::{PerfLibApi, QueryHandle};
use super::registry::{PerfKey, PerfRegistry};
use crate::format::v2::Guid;

const NOT_IMPLEMENTED: Filled = Filled {
    status: ERROR_CALL_NOT_IMPLEMENTED,
    size: 0,
};

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

fn len32(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

fn hkey(key: PerfKey) -> HKEY {
    match key {
        PerfKey::Data => HKEY_PERFORMANCE_DATA,
        PerfKey::Text => HKEY_PERFORMANCE_TEXT,
        PerfKey::NlsText => HKEY_PERFORMANCE_NLSTEXT,
    }
}

/// The local performance registry (`RegQueryValueExW`, `RegCloseKey`).
#[derive(Debug, Default)]
pub struct Registry {
    _private: (),
}

impl Registry {
    /// The local machine's performance registry.
    pub fn new() -> Self {
        Registry::default()
    }
}

impl PerfRegistry for Registry {
    fn query_value(&mut self, key: PerfKey, value: &str, buf: &mut [u8]) -> Filled {
        let name = wide(value);
        // The buffer size is passed as a u32; a larger buffer is used only up to u32::MAX bytes.
        let mut size = len32(buf.len());
        let data = if buf.is_empty() {
            null_mut()
        } else {
            buf.as_mut_ptr()
        };
        // SAFETY: `name` is NUL-terminated and lives across the call; `data` is either NULL (size 0)
        // or valid for writes of `size` ≤ `buf.len()` bytes; `size` is a valid u32 the call may
        // write; the reserved and type pointers may be NULL.
        let status = unsafe {
            RegQueryValueExW(
                hkey(key),
                name.as_ptr(),
                null(),
                null_mut(),
                data,
                &mut size,
            )
        };
        Filled {
            status,
            size: size as usize,
        }
    }

    fn close_key(&mut self, key: PerfKey) -> u32 {
        // SAFETY: the predefined performance keys are always valid handles to close; closing one
        // that is not open returns an error code and has no other effect.
        unsafe { RegCloseKey(hkey(key)) }
    }
}

type EnumerateCounterSetFn = unsafe extern "system" fn(*const u16, *mut GUID, u32, *mut u32) -> u32;
type QueryRegistrationFn =
    unsafe extern "system" fn(*const u16, *const GUID, i32, u32, *mut u8, u32, *mut u32) -> u32;
type EnumerateInstancesFn =
    unsafe extern "system" fn(*const u16, *const GUID, *mut c_void, u32, *mut u32) -> u32;
type OpenQueryFn = unsafe extern "system" fn(*const u16, *mut HANDLE) -> u32;
type CountersFn = unsafe extern "system" fn(HANDLE, *mut c_void, u32) -> u32;
type QueryFn = unsafe extern "system" fn(HANDLE, *mut c_void, u32, *mut u32) -> u32;
type CloseQueryFn = unsafe extern "system" fn(HANDLE) -> u32;

/// The consumer functions, resolved.
#[derive(Clone, Copy)]
struct Functions {
    enumerate_counter_set: EnumerateCounterSetFn,
    query_registration: QueryRegistrationFn,
    enumerate_instances: EnumerateInstancesFn,
    open_query: OpenQueryFn,
    add_counters: CountersFn,
    delete_counters: CountersFn,
    query_counter_info: QueryFn,
    query_counter_data: QueryFn,
    close_query: CloseQueryFn,
}

/// The names of the consumer functions, in [`Functions`] order.
pub const CONSUMER_FUNCTIONS: [&str; 9] = [
    "PerfEnumerateCounterSet",
    "PerfQueryCounterSetRegistrationInfo",
    "PerfEnumerateCounterSetInstances",
    "PerfOpenQueryHandle",
    "PerfAddCounters",
    "PerfDeleteCounters",
    "PerfQueryCounterInfo",
    "PerfQueryCounterData",
    "PerfCloseQueryHandle",
];

/// An exported function's address as `GetProcAddress` returns it.
type RawFn = unsafe extern "system" fn() -> isize;

/// Looks up `names` in `advapi32.dll`: the addresses, or the names it does not export.
fn resolve(names: &[&str]) -> Result<Vec<RawFn>, Vec<String>> {
    let module_name = wide("advapi32.dll");
    // SAFETY: `module_name` is NUL-terminated; GetModuleHandleW only reads it.
    let mut module = unsafe { GetModuleHandleW(module_name.as_ptr()) };
    if module.is_null() {
        // SAFETY: as above; LoadLibraryW loads a system DLL by name and returns NULL on failure.
        module = unsafe { LoadLibraryW(module_name.as_ptr()) };
    }
    if module.is_null() {
        return Err(vec!["advapi32.dll".to_string()]);
    }
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for name in names {
        let c = format!("{name}\0");
        // SAFETY: `module` is a loaded module handle and `c` a NUL-terminated ASCII name.
        match unsafe { GetProcAddress(module, c.as_ptr()) } {
            Some(f) => found.push(f),
            None => missing.push((*name).to_string()),
        }
    }
    if missing.is_empty() {
        Ok(found)
    } else {
        Err(missing)
    }
}

/// The Wine version when the program runs under Wine (`ntdll!wine_get_version`), `None` on Windows.
pub fn wine_version() -> Option<String> {
    let ntdll = wide("ntdll.dll");
    // SAFETY: `ntdll` is NUL-terminated; ntdll.dll is loaded in every Windows process.
    let module = unsafe { GetModuleHandleW(ntdll.as_ptr()) };
    if module.is_null() {
        return None;
    }
    // SAFETY: a loaded module handle and a NUL-terminated name.
    let f = unsafe { GetProcAddress(module, c"wine_get_version".as_ptr().cast()) }?;
    // SAFETY: Wine exports `const char *wine_get_version(void)`, which returns a static
    // NUL-terminated string.
    let text = unsafe {
        let f = std::mem::transmute::<RawFn, unsafe extern "C" fn() -> *const std::ffi::c_char>(f);
        let p = f();
        if p.is_null() {
            return Some(String::new());
        }
        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
    };
    Some(text)
}

/// The user's UI language as the registry names its Perflib language keys: the primary language id
/// in three hex digits (`"009"` English, `"007"` German, `"00c"` French).
pub fn ui_language() -> String {
    // SAFETY: no arguments; returns a LANGID.
    let lang = unsafe { windows_sys::Win32::Globalization::GetUserDefaultUILanguage() };
    format!("{:03x}", lang & 0x3ff)
}

/// A value under `HKEY_LOCAL_MACHINE\SOFTWARE\Microsoft\Windows NT\CurrentVersion` as text
/// (`ProductName`, `CurrentBuild`, `DisplayVersion` …), `None` when absent.
pub fn windows_version_value(name: &str) -> Option<String> {
    use windows_sys::Win32::System::Registry::{RegGetValueW, HKEY_LOCAL_MACHINE, RRF_RT_REG_SZ};
    let key = wide("SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion");
    let value = wide(name);
    let mut buf = vec![0u16; 256];
    let mut size = len32(buf.len() * 2);
    // SAFETY: `key` and `value` are NUL-terminated; `buf` is valid for writes of `size` bytes; the
    // type pointer may be NULL. RRF_RT_REG_SZ makes the call NUL-terminate the string.
    let status = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_SZ,
            null_mut(),
            buf.as_mut_ptr().cast(),
            &mut size,
        )
    };
    if status != 0 {
        return None;
    }
    let units = (size as usize / 2).min(buf.len());
    let text = String::from_utf16_lossy(&buf[..units]);
    Some(text.trim_end_matches('\0').to_string())
}

/// Which of the V2 consumer functions `advapi32.dll` lacks (empty when all are there).
pub fn missing_consumer_functions() -> Vec<String> {
    resolve(&CONSUMER_FUNCTIONS).err().unwrap_or_default()
}

impl Functions {
    fn load() -> Result<Functions, String> {
        let f = resolve(&CONSUMER_FUNCTIONS).map_err(|missing| {
            let mut why = format!("advapi32.dll does not export {}", missing.join(", "));
            if let Some(v) = wine_version() {
                why.push_str(&format!(" (this is Wine {v})"));
            }
            why
        })?;
        // SAFETY: each address was exported under the documented name, whose signature (from
        // perflib.h, as windows-sys declares it) is the type it is converted to; the pointer types
        // differ only in pointee type, which does not change the calling convention.
        unsafe {
            Ok(Functions {
                enumerate_counter_set: std::mem::transmute::<RawFn, EnumerateCounterSetFn>(f[0]),
                query_registration: std::mem::transmute::<RawFn, QueryRegistrationFn>(f[1]),
                enumerate_instances: std::mem::transmute::<RawFn, EnumerateInstancesFn>(f[2]),
                open_query: std::mem::transmute::<RawFn, OpenQueryFn>(f[3]),
                add_counters: std::mem::transmute::<RawFn, CountersFn>(f[4]),
                delete_counters: std::mem::transmute::<RawFn, CountersFn>(f[5]),
                query_counter_info: std::mem::transmute::<RawFn, QueryFn>(f[6]),
                query_counter_data: std::mem::transmute::<RawFn, QueryFn>(f[7]),
                close_query: std::mem::transmute::<RawFn, CloseQueryFn>(f[8]),
            })
        }
    }
}

fn guid(g: Guid) -> GUID {
    GUID {
        data1: g.data1,
        data2: g.data2,
        data3: g.data3,
        data4: g.data4,
    }
}

/// An 8-byte-aligned scratch buffer: the V2 structures (`PERF_COUNTER_IDENTIFIER`,
/// `PERF_DATA_HEADER`) hold 64-bit fields, and callers' byte buffers have no alignment guarantee.
#[derive(Default)]
struct Aligned(Vec<u64>);

impl Aligned {
    fn with_len(&mut self, bytes: usize) -> *mut c_void {
        self.0.clear();
        self.0.resize(bytes.div_ceil(8), 0);
        if bytes == 0 {
            null_mut()
        } else {
            self.0.as_mut_ptr().cast()
        }
    }

    fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        self.0.iter().flat_map(|w| w.to_ne_bytes())
    }

    fn copy_in(&mut self, src: &[u8]) -> *mut c_void {
        let p = self.with_len(src.len());
        for (w, chunk) in self.0.iter_mut().zip(src.chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            *w = u64::from_ne_bytes(b);
        }
        p
    }

    fn copy_out(&self, dst: &mut [u8], len: usize) {
        for (d, s) in dst.iter_mut().take(len).zip(self.bytes()) {
            *d = s;
        }
    }
}

/// The local machine's PerfLib V2 consumer functions.
#[derive(Default)]
pub struct PerfLib {
    functions: Option<Functions>,
    scratch: Aligned,
}

impl std::fmt::Debug for PerfLib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerfLib")
            .field("loaded", &self.functions.is_some())
            .finish_non_exhaustive()
    }
}

impl PerfLib {
    /// The local machine's consumer functions (resolved by [`PerfLibApi::check`]).
    pub fn new() -> Self {
        PerfLib::default()
    }

    /// The functions, resolved on first use; `None` when the system lacks one of them (every call
    /// then answers `ERROR_CALL_NOT_IMPLEMENTED` without calling anything).
    fn f(&mut self) -> Option<Functions> {
        if self.functions.is_none() {
            self.functions = Functions::load().ok();
        }
        self.functions
    }

    fn filled_query(&mut self, call: QueryFn, query: QueryHandle, buf: &mut [u8]) -> Filled {
        let p = self.scratch.with_len(buf.len());
        let mut actual = 0u32;
        // SAFETY: `query` is a handle returned by PerfOpenQueryHandle and not yet closed; `p` is NULL
        // (size 0) or 8-byte aligned and valid for writes of `buf.len()` bytes; `actual` is writable.
        let status = unsafe { call(query.raw() as HANDLE, p, len32(buf.len()), &mut actual) };
        if status == 0 {
            self.scratch.copy_out(buf, actual as usize);
        }
        Filled {
            status,
            size: actual as usize,
        }
    }

    fn counters(&mut self, call: CountersFn, query: QueryHandle, ids: &mut [u8]) -> u32 {
        let p = self.scratch.copy_in(ids);
        // SAFETY: `query` is an open query handle; `p` is NULL (empty list) or an 8-byte-aligned
        // copy of the identifier list, valid for reads and writes of `ids.len()` bytes.
        let status = unsafe { call(query.raw() as HANDLE, p, len32(ids.len())) };
        // The call writes each identifier's Status field: copy the list back.
        self.scratch.copy_out(ids, ids.len());
        status
    }
}

impl PerfLibApi for PerfLib {
    fn check(&mut self) -> Result<(), String> {
        self.functions = Some(Functions::load()?);
        Ok(())
    }

    fn enumerate_counter_sets(&mut self, buf: &mut [u8]) -> Filled {
        let mut ids = vec![GUID::default(); buf.len() / 16];
        let mut actual = 0u32;
        let p = if ids.is_empty() {
            null_mut()
        } else {
            ids.as_mut_ptr()
        };
        let Some(f) = self.f() else {
            return NOT_IMPLEMENTED;
        };
        // SAFETY: `p` is NULL (count 0) or valid for writes of `ids.len()` GUIDs; `actual` is
        // writable. The machine name NULL means the local machine.
        let status = unsafe { (f.enumerate_counter_set)(null(), p, len32(ids.len()), &mut actual) };
        if status == 0 {
            for (i, g) in ids.iter().take(actual as usize).enumerate() {
                let bytes = Guid::new(g.data1, g.data2, g.data3, g.data4).to_bytes();
                if let Some(d) = buf.get_mut(i * 16..i * 16 + 16) {
                    d.copy_from_slice(&bytes);
                }
            }
        }
        Filled {
            status,
            size: (actual as usize).saturating_mul(16),
        }
    }

    fn registration_info(&mut self, set: Guid, request: u32, lang: u32, buf: &mut [u8]) -> Filled {
        let Some(f) = self.f() else {
            return NOT_IMPLEMENTED;
        };
        let id = guid(set);
        let p = self.scratch.with_len(buf.len());
        let mut actual = 0u32;
        // SAFETY: `id` lives across the call; `p` is NULL (size 0) or aligned and valid for writes of
        // `buf.len()` bytes; `actual` is writable; NULL names the local machine.
        let status = unsafe {
            (f.query_registration)(
                null(),
                &id,
                request as i32,
                lang,
                p.cast(),
                len32(buf.len()),
                &mut actual,
            )
        };
        if status == 0 {
            self.scratch.copy_out(buf, actual as usize);
        }
        Filled {
            status,
            size: actual as usize,
        }
    }

    fn enumerate_instances(&mut self, set: Guid, buf: &mut [u8]) -> Filled {
        let Some(f) = self.f() else {
            return NOT_IMPLEMENTED;
        };
        let id = guid(set);
        let p = self.scratch.with_len(buf.len());
        let mut actual = 0u32;
        // SAFETY: as for `registration_info`.
        let status =
            unsafe { (f.enumerate_instances)(null(), &id, p, len32(buf.len()), &mut actual) };
        if status == 0 {
            self.scratch.copy_out(buf, actual as usize);
        }
        Filled {
            status,
            size: actual as usize,
        }
    }

    fn open_query(&mut self) -> Result<QueryHandle, u32> {
        let f = self.f().ok_or(ERROR_CALL_NOT_IMPLEMENTED)?;
        let mut handle: HANDLE = null_mut();
        // SAFETY: `handle` is writable; NULL names the local machine.
        let status = unsafe { (f.open_query)(null(), &mut handle) };
        match status {
            0 if !handle.is_null() => Ok(QueryHandle::from_raw(handle as usize)),
            // A success without a handle is a broken implementation: report it as one.
            0 => Err(ERROR_CALL_NOT_IMPLEMENTED),
            code => Err(code),
        }
    }

    fn add_counters(&mut self, query: QueryHandle, ids: &mut [u8]) -> u32 {
        match self.f() {
            Some(f) => self.counters(f.add_counters, query, ids),
            None => ERROR_CALL_NOT_IMPLEMENTED,
        }
    }

    fn delete_counters(&mut self, query: QueryHandle, ids: &mut [u8]) -> u32 {
        match self.f() {
            Some(f) => self.counters(f.delete_counters, query, ids),
            None => ERROR_CALL_NOT_IMPLEMENTED,
        }
    }

    fn query_counter_info(&mut self, query: QueryHandle, buf: &mut [u8]) -> Filled {
        match self.f() {
            Some(f) => self.filled_query(f.query_counter_info, query, buf),
            None => NOT_IMPLEMENTED,
        }
    }

    fn query_counter_data(&mut self, query: QueryHandle, buf: &mut [u8]) -> Filled {
        match self.f() {
            Some(f) => self.filled_query(f.query_counter_data, query, buf),
            None => NOT_IMPLEMENTED,
        }
    }

    fn close_query(&mut self, query: QueryHandle) -> u32 {
        let Some(f) = self.f() else {
            return ERROR_CALL_NOT_IMPLEMENTED;
        };
        // SAFETY: `query` came from PerfOpenQueryHandle and the source closes it once.
        unsafe { (f.close_query)(query.raw() as HANDLE) }
    }
}
