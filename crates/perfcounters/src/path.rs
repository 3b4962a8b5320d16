//! Counter paths: `\\Machine\Object(Parent/Instance#Index)\Counter`.
//!
//! A [`CounterPath`] names one counter (or, with wildcards, a set of counters) the way PDH does. The
//! ten legal shapes are
//!
//! ```text
//! \\machine\object(parent/instance#index)\counter     \object(parent/instance#index)\counter
//! \\machine\object(parent/instance)\counter           \object(parent/instance)\counter
//! \\machine\object(instance#index)\counter            \object(instance#index)\counter
//! \\machine\object(instance)\counter                  \object(instance)\counter
//! \\machine\object\counter                            \object\counter
//! ```
//!
//! Windows does not escape anything in a path, and real names contain the delimiters: instance names
//! contain parentheses (`PhysicalDisk(0 C:)`, `Process(foo (x86))`) and counter names contain `/`
//! (`Bytes Sent/sec`). The parser therefore uses these rules (see `docs/paths.md` for the reasoning):
//!
//! 1. A path starts with `\`. `\\` starts a machine name, which runs to the next `\`.
//! 2. The object name runs to the first `(` or `\` after it; it cannot contain `\`, `(`, `)` or `*`.
//! 3. If the object is followed by `\`, the rest of the path is the counter name.
//! 4. If the object is followed by `(`, the counter name is everything after the **last** `\` of the
//!    path, the character before that `\` must be `)`, and the instance part is everything between the
//!    `(` and that `)`, whatever it contains (parentheses, backslashes, unbalanced or not).
//! 5. Counter names cannot contain `\`.
//! 6. In the instance part, a trailing `#` followed only by ASCII digits is the index; `C#` or `a#b`
//!    stay part of the name. The parent is split off at the **last** `/`.
//!
//! Wildcards (`*`, any run of characters, case-insensitive) are allowed in the parent, instance and
//! counter names, not in the machine or object names. See [`wildcard_match`] and
//! [`CounterPath::matches_instance`].

use std::fmt;
use std::str::FromStr;

use crate::status::PdhStatus;

/// `PDH_MAX_COUNTER_PATH` (pdh.h): the longest counter path, in UTF-16 code units.
pub const PDH_MAX_COUNTER_PATH: usize = 2048;

/// `MAX_PATH`: an instance string given to [`parse_instance`] must be shorter than this (UTF-16 code
/// units), as for `PdhParseInstanceName`.
pub const MAX_INSTANCE_STRING: usize = 260;

/// A parsed counter path.
///
/// The fields hold the names exactly as written (no case folding, no trimming). Equality, ordering
/// and hashing compare the fields exactly; use the `matches_*` methods for PDH's case-insensitive,
/// wildcard-aware matching.
///
/// [`Display`](fmt::Display) formats like `PdhMakeCounterPath`:
/// `\\machine\object(parent/instance#n)\counter`, leaving out the parts that are `None`. The parent
/// and the index are written only when there is an instance. An index is written whenever it is
/// `Some`, including `Some(0)` as `#0`: PDH names the first occurrence of an instance without a
/// suffix, so a path built from data should leave `index` as `None` for it, while `Some(0)` states
/// "exactly the first occurrence" explicitly (which differs from `None` for wildcard instances, see
/// [`CounterPath::matches_instance`]). Keeping the two apart makes `parse(format(p)) == p`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CounterPath {
    /// The computer name without the leading `\\`; `None` for the local (or default) computer.
    pub machine: Option<String>,
    /// The performance object (counter set), e.g. `Processor`.
    pub object: String,
    /// The parent instance, e.g. `explorer` in `Thread(explorer/0)`.
    pub parent: Option<String>,
    /// The instance name without parent and index, e.g. `_Total`; `None` for a single-instance object.
    pub instance: Option<String>,
    /// The `#n` duplicate index; `None` when the path has no `#n` suffix.
    pub index: Option<u32>,
    /// The counter name, e.g. `% Processor Time`.
    pub counter: String,
}

impl CounterPath {
    /// A path `\object\counter` with no machine and no instance.
    pub fn new(object: impl Into<String>, counter: impl Into<String>) -> Self {
        CounterPath {
            machine: None,
            object: object.into(),
            parent: None,
            instance: None,
            index: None,
            counter: counter.into(),
        }
    }

    /// Parses a counter path. See the [module documentation](self) for the rules.
    pub fn parse(s: &str) -> Result<CounterPath, PathError> {
        parse_path(s)
    }

    /// The same path with the instance name set.
    pub fn with_instance(mut self, instance: impl Into<String>) -> Self {
        self.instance = Some(instance.into());
        self
    }

    /// The same path with the parent instance set (it is only written when there is an instance).
    pub fn with_parent(mut self, parent: impl Into<String>) -> Self {
        self.parent = Some(parent.into());
        self
    }

    /// The same path with the `#n` index set (it is only written when there is an instance).
    pub fn with_index(mut self, index: u32) -> Self {
        self.index = Some(index);
        self
    }

    /// The same path qualified with a machine name, replacing any machine it had. Leading
    /// backslashes are removed, so `"HOST"` and `"\\\\HOST"` give the same result.
    pub fn with_machine(mut self, machine: impl Into<String>) -> Self {
        self.machine = Some(strip_machine(machine.into()));
        self
    }

    /// The same path qualified with `machine` if it names no machine yet, as `typeperf -s` does (and
    /// as typeperf writes every path in its CSV header). Leading backslashes are removed.
    pub fn with_default_machine(self, machine: impl Into<String>) -> Self {
        if self.machine.is_some() {
            self
        } else {
            self.with_machine(machine)
        }
    }

    /// The instance part as written between the parentheses (`parent/instance#n`), or `None` when
    /// the path has no instance.
    pub fn instance_string(&self) -> Option<String> {
        self.instance
            .as_deref()
            .map(|name| format_instance(self.parent.as_deref(), name, self.index))
    }

    /// The identity of this path as PDH compares paths: its canonical text ([`Display`](fmt::Display))
    /// folded with [`fold_case`]. Two paths name the same counter, ignoring case, exactly when their
    /// keys are equal, so the key can index a hash map of counters or log columns.
    ///
    /// ```
    /// use perfcounters::path::CounterPath;
    /// let a: CounterPath = r"\\HOST\Process(SVCHOST#1)\% Processor Time".parse().unwrap();
    /// let b: CounterPath = r"\\host\process(svchost#1)\% processor time".parse().unwrap();
    /// assert_eq!(a.key(), b.key());
    /// assert_eq!(a.key(), r"\\host\process(svchost#1)\% processor time");
    /// ```
    pub fn key(&self) -> String {
        let text = self.to_string();
        match fold_case(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(folded) => folded,
        }
    }

    /// Whether any component contains the wildcard `*`.
    pub fn has_wildcard(&self) -> bool {
        self.has_instance_wildcard()
            || self.counter.contains('*')
            || self.object.contains('*')
            || self.machine.as_deref().is_some_and(|m| m.contains('*'))
    }

    /// Whether the parent or instance name contains the wildcard `*`.
    pub fn has_instance_wildcard(&self) -> bool {
        self.instance.as_deref().is_some_and(|i| i.contains('*'))
            || self.parent.as_deref().is_some_and(|p| p.contains('*'))
    }

    /// Whether the counter name contains the wildcard `*`.
    pub fn has_counter_wildcard(&self) -> bool {
        self.counter.contains('*')
    }

    /// Whether `name` is this path's object (case-insensitive; objects take no wildcards).
    pub fn matches_object(&self, name: &str) -> bool {
        eq_ignore_case(&self.object, name)
    }

    /// Whether `name` matches this path's counter (case-insensitive, with wildcards).
    pub fn matches_counter(&self, name: &str) -> bool {
        wildcard_match(&self.counter, name)
    }

    /// Whether a counter of the computer `machine` (`None`: unnamed) is selected by this path's
    /// machine part: a path without a machine selects every computer, a path with one only that
    /// computer (case-insensitive).
    pub fn matches_machine(&self, machine: Option<&str>) -> bool {
        match (&self.machine, machine) {
            (None, _) => true,
            (Some(want), Some(have)) => eq_ignore_case(want, have),
            (Some(_), None) => false,
        }
    }

    /// Whether this path (a pattern, wildcards allowed) selects the concrete path `concrete`, with
    /// the rules of the `matches_*` methods: machine, object, counter, and the instance (a pattern
    /// without an instance selects only single-instance counters, a pattern with one only
    /// instances). `object_names` and `counter_names` are the names to try for the concrete
    /// object and counter; pass the concrete ones, or those plus their translations.
    pub fn selects<'a>(
        &self,
        concrete: &CounterPath,
        mut object_names: impl Iterator<Item = &'a str>,
        mut counter_names: impl Iterator<Item = &'a str>,
    ) -> bool {
        self.matches_machine(concrete.machine.as_deref())
            && match (&self.instance, &concrete.instance) {
                (None, None) => true,
                (Some(_), Some(name)) => self.matches_instance(
                    concrete.parent.as_deref(),
                    name,
                    concrete.index.unwrap_or(0),
                ),
                _ => false,
            }
            && object_names.any(|o| self.matches_object(o))
            && counter_names.any(|c| self.matches_counter(c))
    }

    /// Whether an instance of the object, given by its parent name, its own name and its duplicate
    /// index (0 for the first instance with that parent and name, 1 for the second, …), is selected
    /// by this path. Names compare case-insensitively; `*` matches any run of characters, `_Total`
    /// included.
    ///
    /// * A path without an instance selects no instance (it names a single-instance object).
    /// * Index: `#n` selects exactly index `n`. Without `#n`, a path whose parent or instance
    ///   contains a wildcard selects every index, and any other path selects only index 0, the
    ///   first occurrence. A pattern instance ending in `#*` (`svchost#*`) selects every index of
    ///   the name before it.
    /// * A path with a parent matches the instance's full name: the pattern `parent/instance` is
    ///   compared with `parent/name` (or with `name` alone when the instance has no parent). Which
    ///   `/` the parser split at therefore does not change what is selected.
    /// * A path without a parent whose instance has a wildcard ignores the parent:
    ///   `Thread(*)` selects every thread, `Thread(1*)` the threads numbered 1… of every process.
    /// * A path without a parent and without a wildcard names one instance exactly, so it only
    ///   matches an instance whose full name equals it: `Thread(0)` selects nothing when every
    ///   thread has a parent process; write `Thread(explorer/0)`.
    pub fn matches_instance(&self, parent: Option<&str>, name: &str, index: u32) -> bool {
        let Some(pattern) = self.instance.as_deref() else {
            return false;
        };
        if self.index.is_none() {
            if let Some(rest) = pattern.strip_suffix("#*").filter(|r| !r.is_empty()) {
                if self.names_match(rest, true, parent, name) {
                    return true;
                }
            }
        }
        let wildcard = self.has_instance_wildcard();
        let index_ok = match self.index {
            Some(n) => n == index,
            None => wildcard || index == 0,
        };
        index_ok && self.names_match(pattern, wildcard, parent, name)
    }

    /// Name part of [`CounterPath::matches_instance`]: `pattern` is this path's instance name (possibly
    /// without a `#*` suffix), `wildcard` whether the pattern selects several instances.
    fn names_match(&self, pattern: &str, wildcard: bool, parent: Option<&str>, name: &str) -> bool {
        match (self.parent.as_deref(), parent) {
            (Some(pp), Some(dp)) => {
                wildcard_match(&join_parent(pp, pattern), &join_parent(dp, name))
            }
            (Some(pp), None) => wildcard_match(&join_parent(pp, pattern), name),
            (None, None) => wildcard_match(pattern, name),
            (None, Some(dp)) => {
                let full = join_parent(dp, name);
                if wildcard {
                    wildcard_match(pattern, name) || wildcard_match(pattern, &full)
                } else {
                    eq_ignore_case(pattern, &full)
                }
            }
        }
    }
}

fn join_parent(parent: &str, name: &str) -> String {
    let mut s = String::with_capacity(parent.len() + 1 + name.len());
    s.push_str(parent);
    s.push('/');
    s.push_str(name);
    s
}

fn strip_machine(machine: String) -> String {
    match machine.strip_prefix('\\') {
        Some(rest) => rest.trim_start_matches('\\').to_owned(),
        None => machine,
    }
}

impl fmt::Display for CounterPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(machine) = &self.machine {
            write!(f, "\\\\{machine}")?;
        }
        write!(f, "\\{}", self.object)?;
        if let Some(instance) = &self.instance {
            f.write_str("(")?;
            write_instance(f, self.parent.as_deref(), instance, self.index)?;
            f.write_str(")")?;
        }
        write!(f, "\\{}", self.counter)
    }
}

impl FromStr for CounterPath {
    type Err = PathError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_path(s)
    }
}

fn write_instance(
    f: &mut impl fmt::Write,
    parent: Option<&str>,
    name: &str,
    index: Option<u32>,
) -> fmt::Result {
    if let Some(parent) = parent {
        f.write_str(parent)?;
        f.write_char('/')?;
    }
    f.write_str(name)?;
    if let Some(index) = index {
        write_index(f, index)?;
    }
    Ok(())
}

/// Appends the duplicate suffix `#index` of an instance name.
pub(crate) fn write_index(f: &mut impl fmt::Write, index: u32) -> fmt::Result {
    let mut digits = [0u8; 10];
    let mut start = digits.len();
    let mut v = index;
    loop {
        start -= 1;
        if let Some(d) = digits.get_mut(start) {
            *d = b'0' + (v % 10) as u8;
        }
        v /= 10;
        if v == 0 || start == 0 {
            break;
        }
    }
    f.write_char('#')?;
    // Digit by digit: into a `String` (naming thousands of instances), a push each.
    for &d in digits.get(start..).unwrap_or_default() {
        f.write_char(char::from(d))?;
    }
    Ok(())
}

/// Formats an instance string `parent/name#index` (the inverse of [`parse_instance`]); the parent
/// and the index are left out when `None`.
pub fn format_instance(parent: Option<&str>, name: &str, index: Option<u32>) -> String {
    let mut s = String::with_capacity(
        parent
            .map_or(0, |p| p.len().saturating_add(1))
            .saturating_add(name.len())
            .saturating_add(if index.is_some() { 11 } else { 0 }),
    );
    // Writing into a String cannot fail.
    let _ = write_instance(&mut s, parent, name, index);
    s
}

/// The parts of an instance string (`parent/name#index`), borrowed from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InstanceName<'a> {
    /// The parent instance, when the string has a `/`.
    pub parent: Option<&'a str>,
    /// The instance name.
    pub name: &'a str,
    /// The `#n` index, when present. `PdhParseInstanceName` reports 0 when it is absent; use
    /// `index.unwrap_or(0)` for that.
    pub index: Option<u32>,
}

impl fmt::Display for InstanceName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_instance(f, self.parent, self.name, self.index)
    }
}

/// Splits an instance string like `PdhParseInstanceName`: `instance`, `instance#index`,
/// `parent/instance` or `parent/instance#index`.
///
/// The index is a trailing `#` followed only by ASCII digits; it must fit in a `u32`. The parent is
/// split off at the last `/`. Neither the parent nor the instance name may be empty, and the whole
/// string must be shorter than [`MAX_INSTANCE_STRING`] UTF-16 code units, as `PdhParseInstanceName`
/// requires. Errors map to `PDH_INVALID_INSTANCE` through [`PathError::status`]; positions are
/// character indexes in `s`.
pub fn parse_instance(s: &str) -> Result<InstanceName<'_>, PathError> {
    let length = s.encode_utf16().count();
    if length >= MAX_INSTANCE_STRING {
        return Err(PathError::new(
            utf16_limit_position(s, MAX_INSTANCE_STRING - 1),
            PathErrorKind::InstanceTooLong { length },
        ));
    }
    split_instance(s, 0)
}

/// Splits `s` (the text between the parentheses) into parent, name and index. `base` is the
/// character position of `s` in the whole input, for error positions.
fn split_instance(s: &str, base: usize) -> Result<InstanceName<'_>, PathError> {
    let (body, index) = match s.rfind('#') {
        Some(hash) => {
            let digits = s.get(hash + 1..).unwrap_or("");
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                let index = digits.parse::<u32>().map_err(|_| {
                    PathError::new(
                        base + char_pos(s, hash + 1),
                        PathErrorKind::IndexOutOfRange {
                            digits: digits.to_owned(),
                        },
                    )
                })?;
                (s.get(..hash).unwrap_or(""), Some(index))
            } else {
                (s, None)
            }
        }
        None => (s, None),
    };
    let (parent, name, name_start) = match body.rfind('/') {
        // A leading '/' cannot start a parent: "/" and "/home" (Linux mount points) are instance names.
        Some(0) => (None, body, 0),
        Some(slash) => (
            Some(body.get(..slash).unwrap_or("")),
            body.get(slash + 1..).unwrap_or(""),
            slash + 1,
        ),
        None => (None, body, 0),
    };
    if parent.is_some_and(str::is_empty) {
        return Err(PathError::new(
            base,
            PathErrorKind::EmptyName(PathComponent::Parent),
        ));
    }
    if name.is_empty() {
        return Err(PathError::new(
            base + char_pos(s, name_start),
            PathErrorKind::EmptyName(PathComponent::Instance),
        ));
    }
    Ok(InstanceName {
        parent,
        name,
        index,
    })
}

/// Number of characters in `s` before byte offset `byte`.
fn char_pos(s: &str, byte: usize) -> usize {
    s.get(..byte).map_or(0, |p| p.chars().count())
}

/// Character position of the first character that takes the UTF-16 length of `s` past `limit`.
fn utf16_limit_position(s: &str, limit: usize) -> usize {
    let mut units = 0usize;
    for (i, c) in s.chars().enumerate() {
        units = units.saturating_add(c.len_utf16());
        if units > limit {
            return i;
        }
    }
    s.chars().count()
}

/// Parses a full counter path, `\\machine\object(parent/instance#index)\counter` (machine and
/// instance optional). Positions in errors are character indexes in `s`. All delimiters are ASCII,
/// so byte offsets found by scanning bytes are always character boundaries.
fn parse_path(s: &str) -> Result<CounterPath, PathError> {
    check_path_length(s)?;
    if s.as_bytes().first() != Some(&b'\\') {
        return Err(PathError::new(
            0,
            PathErrorKind::Expected {
                expected: "'\\' at the start of the path",
                found: s.chars().next(),
            },
        ));
    }
    let (machine, object_sep) = path_machine(s)?;
    let (object, object_end) = path_object(s, object_sep + 1)?;
    let machine = machine.map(str::to_owned);
    let object = object.to_owned();
    match s.as_bytes().get(object_end) {
        None => Err(PathError::new(
            char_pos(s, object_end),
            PathErrorKind::Expected {
                expected: "'\\' and a counter name after the object name",
                found: None,
            },
        )),
        Some(b'\\') => Ok(CounterPath {
            machine,
            object,
            parent: None,
            instance: None,
            index: None,
            counter: path_counter(s, object_end + 1)?.to_owned(),
        }),
        Some(_) => {
            let (inner, inner_start, counter_start) = path_instance(s, object_end)?;
            let counter = path_counter(s, counter_start)?;
            let parts = split_instance(inner, char_pos(s, inner_start))?;
            Ok(CounterPath {
                machine,
                object,
                parent: parts.parent.map(str::to_owned),
                instance: Some(parts.name.to_owned()),
                index: parts.index,
                counter: counter.to_owned(),
            })
        }
    }
}

/// A path must not be empty, nor longer than [`PDH_MAX_COUNTER_PATH`] UTF-16 code units.
fn check_path_length(s: &str) -> Result<(), PathError> {
    if s.is_empty() {
        return Err(PathError::new(0, PathErrorKind::Empty));
    }
    let length = s.encode_utf16().count();
    if length > PDH_MAX_COUNTER_PATH {
        return Err(PathError::new(
            utf16_limit_position(s, PDH_MAX_COUNTER_PATH),
            PathErrorKind::PathTooLong { length },
        ));
    }
    Ok(())
}

/// The machine of a path that starts `\\name\`, and the byte offset of the `\` that ends it; no
/// machine, and offset 0, for a path that starts with one `\`.
fn path_machine(s: &str) -> Result<(Option<&str>, usize), PathError> {
    let bytes = s.as_bytes();
    if bytes.get(1) != Some(&b'\\') {
        return Ok((None, 0));
    }
    let start = 2;
    let end = find_byte(bytes, start, |b| b == b'\\').unwrap_or(bytes.len());
    let machine = s.get(start..end).unwrap_or("");
    if machine.is_empty() {
        return Err(PathError::new(
            char_pos(s, start),
            PathErrorKind::EmptyName(PathComponent::Machine),
        ));
    }
    if let Some(star) = find_byte(bytes, start, |b| b == b'*').filter(|&p| p < end) {
        return Err(PathError::new(
            char_pos(s, star),
            PathErrorKind::Wildcard(PathComponent::Machine),
        ));
    }
    if end == bytes.len() {
        return Err(PathError::new(
            char_pos(s, end),
            PathErrorKind::Expected {
                expected: "'\\' after the machine name",
                found: None,
            },
        ));
    }
    Ok((Some(machine), end))
}

/// The object name that starts at byte `start` and runs up to the first `(` or `\`, and the byte
/// offset where it ends. It must not be empty nor hold `)` or `*`.
fn path_object(s: &str, start: usize) -> Result<(&str, usize), PathError> {
    let bytes = s.as_bytes();
    let end = find_byte(bytes, start, |b| b == b'(' || b == b'\\').unwrap_or(bytes.len());
    if let Some(bad) = find_byte(bytes, start, |b| b == b')' || b == b'*').filter(|&p| p < end) {
        let kind = if bytes.get(bad) == Some(&b'*') {
            PathErrorKind::Wildcard(PathComponent::Object)
        } else {
            PathErrorKind::Unexpected {
                found: ')',
                component: PathComponent::Object,
            }
        };
        return Err(PathError::new(char_pos(s, bad), kind));
    }
    let object = s.get(start..end).unwrap_or("");
    if object.is_empty() {
        return Err(PathError::new(
            char_pos(s, start),
            PathErrorKind::EmptyName(PathComponent::Object),
        ));
    }
    Ok((object, end))
}

/// The instance in the parentheses that open at byte `open`: it runs to the `)` just before the
/// last `\`. Returns the text between the parentheses, the byte offset where it starts, and the
/// byte offset where the counter name starts.
fn path_instance(s: &str, open: usize) -> Result<(&str, usize, usize), PathError> {
    let bytes = s.as_bytes();
    let at = |byte: usize| char_pos(s, byte);
    let inner_start = open + 1;
    let last_bs = bytes
        .iter()
        .rposition(|&b| b == b'\\')
        .filter(|&q| q > open);
    let Some(q) = last_bs else {
        let kind = if bytes.len() > inner_start && bytes.last() == Some(&b')') {
            PathErrorKind::Expected {
                expected: "'\\' and a counter name after the instance",
                found: None,
            }
        } else {
            PathErrorKind::UnbalancedParenthesis {
                opened_at: at(open),
            }
        };
        return Err(PathError::new(at(bytes.len()), kind));
    };
    let close = q.wrapping_sub(1);
    if close < inner_start || bytes.get(close) != Some(&b')') {
        // Either the counter name contains `\` (a `)\` occurs earlier), or the `(` is never
        // closed.
        let last_close = (inner_start..q)
            .rev()
            .find(|&j| bytes.get(j) == Some(&b')') && bytes.get(j + 1) == Some(&b'\\'));
        let err = match last_close {
            Some(j) => {
                let bs = find_byte(bytes, j + 2, |b| b == b'\\').unwrap_or(q);
                PathError::new(
                    at(bs),
                    PathErrorKind::Unexpected {
                        found: '\\',
                        component: PathComponent::Counter,
                    },
                )
            }
            None => PathError::new(
                at(q),
                PathErrorKind::UnbalancedParenthesis {
                    opened_at: at(open),
                },
            ),
        };
        return Err(err);
    }
    Ok((s.get(inner_start..close).unwrap_or(""), inner_start, q + 1))
}

/// The counter name: the rest of the path from byte `start`, not empty and without `\`.
fn path_counter(s: &str, start: usize) -> Result<&str, PathError> {
    let counter = s.get(start..).unwrap_or("");
    if counter.is_empty() {
        return Err(PathError::new(
            char_pos(s, start),
            PathErrorKind::EmptyName(PathComponent::Counter),
        ));
    }
    if let Some(bs) = find_byte(s.as_bytes(), start, |b| b == b'\\') {
        return Err(PathError::new(
            char_pos(s, bs),
            PathErrorKind::Unexpected {
                found: '\\',
                component: PathComponent::Counter,
            },
        ));
    }
    Ok(counter)
}

fn find_byte(bytes: &[u8], from: usize, pred: impl Fn(u8) -> bool) -> Option<usize> {
    bytes
        .get(from..)?
        .iter()
        .position(|&b| pred(b))
        .and_then(|p| p.checked_add(from))
}

/// A component of a counter path, named in errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathComponent {
    /// The computer name after `\\`.
    Machine,
    /// The object name.
    Object,
    /// The parent instance name.
    Parent,
    /// The instance name.
    Instance,
    /// The counter name.
    Counter,
}

impl fmt::Display for PathComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PathComponent::Machine => "machine name",
            PathComponent::Object => "object name",
            PathComponent::Parent => "parent instance name",
            PathComponent::Instance => "instance name",
            PathComponent::Counter => "counter name",
        })
    }
}

/// What is wrong with a counter path or an instance string.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PathErrorKind {
    /// The input is empty.
    Empty,
    /// The path is longer than [`PDH_MAX_COUNTER_PATH`].
    PathTooLong {
        /// The length of the path in UTF-16 code units.
        length: usize,
    },
    /// The instance string is not shorter than [`MAX_INSTANCE_STRING`].
    InstanceTooLong {
        /// The length of the instance string in UTF-16 code units.
        length: usize,
    },
    /// A delimiter or name was expected.
    Expected {
        /// What was expected.
        expected: &'static str,
        /// What was found instead; `None` at the end of the input.
        found: Option<char>,
    },
    /// A component is empty.
    EmptyName(PathComponent),
    /// A character that the component cannot contain.
    Unexpected {
        /// The character.
        found: char,
        /// The component it appeared in.
        component: PathComponent,
    },
    /// A wildcard in a component that takes none (the machine or the object).
    Wildcard(PathComponent),
    /// The `(` that opens the instance has no `)` followed by `\` and the counter name.
    UnbalancedParenthesis {
        /// Character position of the `(`.
        opened_at: usize,
    },
    /// The `#n` index does not fit in 32 bits.
    IndexOutOfRange {
        /// The digits as written.
        digits: String,
    },
}

/// A malformed counter path or instance string: where, and what is wrong.
///
/// Displays as `at character N: message`, N being the 0-based character (not byte) position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PathError {
    /// The 0-based character position where the problem was found.
    pub position: usize,
    /// What is wrong.
    pub kind: PathErrorKind,
}

impl PathError {
    fn new(position: usize, kind: PathErrorKind) -> Self {
        PathError { position, kind }
    }

    /// The PDH status a PDH function reports for this problem when adding or validating a path.
    ///
    /// * empty input: `PDH_INVALID_ARGUMENT` (as `PdhValidatePath("")`);
    /// * an empty counter name (`\System\`): `PDH_CSTATUS_NO_COUNTERNAME`;
    /// * a bad instance string (empty parent or instance name, index out of range, too long):
    ///   `PDH_INVALID_INSTANCE` (as `PdhParseInstanceName`);
    /// * a wildcard in the machine or object name, or a path longer than
    ///   `PDH_MAX_COUNTER_PATH`: `PDH_INVALID_PATH`;
    /// * any other syntax error, including a missing counter (`\System`) and a missing leading `\`:
    ///   `PDH_CSTATUS_BAD_COUNTERNAME` (as `PdhValidatePath`).
    ///
    /// `PdhParseCounterPath` itself reports every malformed path as `PDH_INVALID_PATH`.
    pub fn status(&self) -> PdhStatus {
        match &self.kind {
            PathErrorKind::Empty => PdhStatus::PDH_INVALID_ARGUMENT,
            PathErrorKind::EmptyName(PathComponent::Counter) => {
                PdhStatus::PDH_CSTATUS_NO_COUNTERNAME
            }
            PathErrorKind::EmptyName(PathComponent::Parent | PathComponent::Instance)
            | PathErrorKind::IndexOutOfRange { .. }
            | PathErrorKind::InstanceTooLong { .. } => PdhStatus::PDH_INVALID_INSTANCE,
            PathErrorKind::Wildcard(_) | PathErrorKind::PathTooLong { .. } => {
                PdhStatus::PDH_INVALID_PATH
            }
            _ => PdhStatus::PDH_CSTATUS_BAD_COUNTERNAME,
        }
    }
}

struct Found(Option<char>);

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("the end of the path"),
            Some(c) => write!(f, "{}", Quoted(c)),
        }
    }
}

struct Quoted(char);

impl fmt::Display for Quoted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_control() {
            write!(f, "'{}'", self.0.escape_debug())
        } else {
            write!(f, "'{}'", self.0)
        }
    }
}

impl fmt::Display for PathErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathErrorKind::Empty => f.write_str("empty path"),
            PathErrorKind::PathTooLong { length } => write!(
                f,
                "path longer than PDH_MAX_COUNTER_PATH ({PDH_MAX_COUNTER_PATH} characters): \
                 {length} characters"
            ),
            PathErrorKind::InstanceTooLong { length } => write!(
                f,
                "instance string longer than {} characters: {length} characters",
                MAX_INSTANCE_STRING - 1
            ),
            PathErrorKind::Expected { expected, found } => {
                write!(f, "expected {expected}, found {}", Found(*found))
            }
            PathErrorKind::EmptyName(component) => write!(f, "empty {component}"),
            PathErrorKind::Unexpected { found, component } => {
                write!(f, "unexpected {} in the {component}", Quoted(*found))
            }
            PathErrorKind::Wildcard(component) => {
                write!(f, "wildcard not allowed in the {component}")
            }
            PathErrorKind::UnbalancedParenthesis { opened_at } => write!(
                f,
                "unbalanced parenthesis opened at character {opened_at}: expected ')' followed by \
                 '\\' and the counter name"
            ),
            PathErrorKind::IndexOutOfRange { digits } => write!(
                f,
                "instance index {digits} is out of range (the largest is {})",
                u32::MAX
            ),
        }
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at character {}: {}", self.position, self.kind)
    }
}

impl std::error::Error for PathError {}

/// Matches `text` against `pattern`, in which `*` stands for any run of characters (including none),
/// case-insensitively as PDH compares names. Every other character, `?` included, is literal.
///
/// Case folding is per character, by the rule of [`fold_case`]: ASCII letters directly, other
/// characters through [`char::to_lowercase`] when that gives one character. The algorithm is the greedy one that backtracks only to the most recent
/// `*`, without recursion: at most `len(pattern) × len(text)` steps, so patterns such as `*a*a*a*a*b`
/// cannot blow up. ASCII inputs are matched on bytes without allocating.
pub fn wildcard_match(pattern: &str, text: &str) -> bool {
    matches_case_insensitive(pattern, text, false)
}

/// Matches the file name `name` against `pattern`, in which `*` stands for any run of characters
/// and `?` for any one character, compared as [`wildcard_match`] compares: the wildcards of log
/// inputs such as relog's `logs\*.csv`, which stand in the file name only.
pub(crate) fn file_name_match(pattern: &str, name: &str) -> bool {
    matches_case_insensitive(pattern, name, true)
}

/// [`wildcard_match`], and with `any_one`, `?` matches any one character.
fn matches_case_insensitive(pattern: &str, text: &str, any_one: bool) -> bool {
    if pattern.is_ascii() && text.is_ascii() {
        glob(
            pattern.as_bytes(),
            text.as_bytes(),
            b'*',
            any_one.then_some(b'?'),
            |a, b| a.eq_ignore_ascii_case(&b),
        )
    } else {
        let p: Vec<char> = pattern.chars().collect();
        let t: Vec<char> = text.chars().collect();
        glob(&p, &t, '*', any_one.then_some('?'), char_eq_ignore_case)
    }
}

fn glob<T: Copy + PartialEq>(
    p: &[T],
    t: &[T],
    star: T,
    one: Option<T>,
    eq: impl Fn(T, T) -> bool,
) -> bool {
    let mut pi = 0usize;
    let mut ti = 0usize;
    // (pattern position after the last `*`, text position that `*` currently extends to)
    let mut backtrack: Option<(usize, usize)> = None;
    while let Some(&tc) = t.get(ti) {
        match p.get(pi) {
            Some(&pc) if pc == star => {
                pi += 1;
                backtrack = Some((pi, ti));
            }
            Some(&pc) if Some(pc) == one || eq(pc, tc) => {
                pi += 1;
                ti += 1;
            }
            _ => match backtrack {
                Some((bp, bt)) => {
                    let bt = bt + 1;
                    backtrack = Some((bp, bt));
                    pi = bp;
                    ti = bt;
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|&c| c == star))
}

fn char_eq_ignore_case(a: char, b: char) -> bool {
    a == b || fold_char(a) == fold_char(b)
}

/// Case-insensitive equality of two names, as PDH compares object, counter and instance names: the
/// same per-character folding as [`wildcard_match`], without wildcards. `fold_case(a) == fold_case(b)`
/// gives the same answer (see [`fold_case`]).
pub fn eq_ignore_case(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    if a.is_ascii() && b.is_ascii() {
        a.eq_ignore_ascii_case(b)
    } else {
        let mut ai = a.chars();
        let mut bi = b.chars();
        loop {
            match (ai.next(), bi.next()) {
                (None, None) => return true,
                (Some(x), Some(y)) if char_eq_ignore_case(x, y) => {}
                _ => return false,
            }
        }
    }
}

/// The key form of [`eq_ignore_case`]: two names are equal ignoring case exactly when their folded
/// forms are equal, so the folded form can key a hash map. Each character is replaced by its
/// lowercase form ([`char::to_lowercase`]) when that is a single character; a character whose
/// lowercase form is longer (only `İ`, U+0130) is kept as it is, since no other character shares its
/// lowercase form. ASCII names without capitals are returned as they are, without allocating.
///
/// This is the project's one case rule for names (machines, objects, instances, counters and whole
/// paths: [`CounterPath::key`]); everything that compares, keys or sorts names ignoring case uses it
/// or its forms [`eq_ignore_case`], [`wildcard_match`] and [`cmp_ignore_case`]. Being per character,
/// it differs from [`str::to_lowercase`]: `ΣΣ` folds to `σσ` (not to `σς`, as a word-final sigma),
/// and `İ` stays one character.
pub fn fold_case(name: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    if name.is_ascii() {
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(name.to_ascii_lowercase())
        } else {
            Cow::Borrowed(name)
        }
    } else {
        Cow::Owned(name.chars().map(fold_char).collect())
    }
}

/// The folding of one character by [`fold_case`]: its lowercase form when that is one character,
/// else the character itself.
fn fold_char(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// Orders two names by their [`fold_case`] forms, names equal ignoring case by their exact text: the
/// sort order that agrees with [`eq_ignore_case`] (names that differ only in case sort together).
pub fn cmp_ignore_case(a: &str, b: &str) -> std::cmp::Ordering {
    a.chars()
        .map(fold_char)
        .cmp(b.chars().map(fold_char))
        .then_with(|| a.cmp(b))
}

/// A name that compares and hashes as its [`fold_case`] form, without building that string: a map
/// keyed by `Folded` finds names ignoring case with no allocation per lookup.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Folded<'a>(pub(crate) &'a str);

impl PartialEq for Folded<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0, other.0);
        a == b
            || if a.is_ascii() && b.is_ascii() {
                a.eq_ignore_ascii_case(b)
            } else {
                a.chars().map(fold_char).eq(b.chars().map(fold_char))
            }
    }
}

impl Eq for Folded<'_> {}

impl std::hash::Hash for Folded<'_> {
    /// Hashes the UTF-8 bytes of `fold_case(name)`, in chunks of a small buffer.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut buf = [0u8; 64];
        if self.0.is_ascii() {
            for chunk in self.0.as_bytes().chunks(buf.len()) {
                let folded = buf.get_mut(..chunk.len()).unwrap_or_default();
                for (f, b) in folded.iter_mut().zip(chunk) {
                    *f = b.to_ascii_lowercase();
                }
                state.write(folded);
            }
            state.write_u8(0xff);
            return;
        }
        let mut len = 0usize;
        for c in self.0.chars().map(fold_char) {
            if len + 4 > buf.len() {
                state.write(buf.get(..len).unwrap_or_default());
                len = 0;
            }
            len += buf
                .get_mut(len..)
                .map_or(0, |rest| c.encode_utf8(rest).len());
        }
        state.write(buf.get(..len).unwrap_or_default());
        state.write_u8(0xff);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_match_with_both_wildcards() {
        let glob = file_name_match;
        assert!(glob("*.csv", "A.CSV"));
        assert!(glob("log?.csv", "log1.csv"));
        assert!(!glob("log?.csv", "log10.csv"));
        assert!(glob("*", ""));
        assert!(glob("a*b*c", "aXbYc"));
        assert!(!glob("a*b*c", "aXbY"));
        assert!(glob("journal-?.CSV", "Journal-\u{e9}.csv"));
        assert!(glob("\u{c9}T\u{c9}*", "\u{e9}t\u{e9}.blg"));
        // In counter paths `?` is literal.
        assert!(!wildcard_match("log?", "log1"));
        assert!(wildcard_match("log?", "LOG?"));
    }

    #[test]
    fn folded_keys_match_fold_case() {
        use std::hash::{BuildHasher, RandomState};
        let long = "Ab".repeat(70);
        let names = [
            "svchost",
            "SVCHOST",
            "svchost#1",
            "explorer/0",
            "Explorer/0",
            "\u{212A}elvin", // KELVIN SIGN folds to 'k'
            "kelvin",
            "\u{130}stanbul", // its lowercase is two characters: kept as is
            "i\u{307}stanbul",
            "\u{c9}T\u{c9}",
            "\u{e9}t\u{e9}",
            long.as_str(),
            &long.to_lowercase(),
            "",
        ];
        let state = RandomState::new();
        for a in names {
            for b in names {
                let same = fold_case(a) == fold_case(b);
                assert_eq!(Folded(a) == Folded(b), same, "{a:?} {b:?}");
                assert_eq!(eq_ignore_case(a, b), same, "{a:?} {b:?}");
            }
            assert_eq!(
                state.hash_one(Folded(a)),
                state.hash_one(fold_case(a).as_ref()),
                "{a:?}"
            );
        }
        let mut s = String::from("x");
        write_index(&mut s, 0).unwrap();
        write_index(&mut s, 7).unwrap();
        write_index(&mut s, u32::MAX).unwrap();
        assert_eq!(s, "x#0#7#4294967295");
    }

    #[test]
    fn glob_basics() {
        assert!(wildcard_match("", ""));
        assert!(!wildcard_match("", "a"));
        assert!(wildcard_match("*", ""));
        assert!(wildcard_match("**", "abc"));
        assert!(wildcard_match("a*c", "abbbc"));
        assert!(!wildcard_match("a*c", "abbbd"));
        assert!(wildcard_match("*b*", "abc"));
        assert!(!wildcard_match("abc", "ab"));
        assert!(!wildcard_match("ab", "abc"));
    }

    #[test]
    fn utf16_limit_position_counts_units() {
        // Each U+1F600 is two UTF-16 units: with a limit of 3, the second one crosses it.
        assert_eq!(utf16_limit_position("a\u{1F600}\u{1F600}", 3), 2);
        assert_eq!(utf16_limit_position("abc", 3), 3);
    }

    #[test]
    fn strip_machine_prefix() {
        assert_eq!(strip_machine("\\\\HOST".into()), "HOST");
        assert_eq!(strip_machine("HOST".into()), "HOST");
    }
}
