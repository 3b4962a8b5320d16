//! No source file of the library or of the command uses, directly or through others, a file that
//! uses it back.
//!
//! The check reads the sources of `crates/perfcounters/src` and `crates/perfcounters-cli/src`. Each
//! `.rs` file is a node. Each path outside comments and strings that names something of the crate
//! (`use crate::…`, `use super::…`, `use self::…`, a `use` or inline path that starts with a child
//! module or with a name a `use` brought in, inline `crate::x::y` and `super::x` paths) is an edge
//! from the file that writes it to the file that **defines** what it names:
//!
//! * a path is followed down the module tree to the deepest module that is a file of its own (an
//!   inline `mod x { … }` belongs to its file);
//! * when the next name there is one that file imports (`use` or `pub use`), the edge follows that
//!   import to its target, and so on: a file that names `super::BlgLogReader`, which `log/mod.rs`
//!   re-exports from `log/blg.rs`, has an edge to `log/blg.rs`, not to `log/mod.rs`;
//! * what a file writes about its own submodules (`mod` declarations, `pub use child::…`
//!   re-exports, calls into them) is the module tree, parent to child, and no edge. Everything else
//!   is: a child using what its parent file itself defines (`super::cores`), a file using a
//!   sibling, a cousin or anything elsewhere in the crate.
//!
//! These edges form no cycle. Unit tests are left out (files named `tests.rs` and every item under
//! `#[cfg(test)]`): a test may drive one module through another. Inside the library, nothing is
//! named through the crate root's re-exports (`crate::CounterType`): the library names the module
//! that defines it (`crate::counter_type::CounterType`); the re-exports are for users.
//!
//! The same reading gives the library's public types: a `struct`, `enum`, `trait`, `type` or
//! `union` declared `pub` in a module users can name (the root and each `pub mod` inside one),
//! or re-exported by a `pub use` of such a module. No two of them share a name: a type users
//! write as `Sample` is one type wherever they meet it, and a new one that repeats a name fails
//! the check with the paths of both.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path from the crate root (`["log", "model"]`); the root is empty.
type ModPath = Vec<String>;

// --- Reading the sources ---------------------------------------------------------------------------

/// A token of Rust code: what the check needs (identifiers and punctuation), comments, string and
/// character literals and lifetimes left out.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The tokens of `text`.
fn tokens(text: &str) -> Vec<Tok> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let n = chars.len();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < n {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < n && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0usize;
            while i < n {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '"' {
            i += 1;
            while i < n && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if (c == 'r' || (c == 'b' && at(i + 1) == 'r'))
            && matches!(at(i + 1 + usize::from(c == 'b')), '"' | '#')
            && {
                // A raw string `r"…"`, `r#"…"#` (not the raw identifier `r#name`).
                let mut j = i + 1 + usize::from(c == 'b');
                while at(j) == '#' {
                    j += 1;
                }
                at(j) == '"'
            }
        {
            let mut j = i + 1 + usize::from(c == 'b');
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if j >= n {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|h| at(j + h) == '#') {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
        } else if c == 'b' && at(i + 1) == '"' {
            i += 1; // the string itself on the next turn
        } else if c == 'b' && at(i + 1) == '\'' {
            i += 1; // the byte as a character on the next turn
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime / label ('a).
            if at(i + 1) == '\\' {
                // Past the escaped character (`'\''`), then to the closing quote (`'\u{..}'`).
                i += 3;
                while i < n && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while i < n && is_ident(chars[i]) {
                    i += 1;
                }
            }
        } else if is_ident_start(c) {
            let start = i;
            if c == 'r' && at(i + 1) == '#' && is_ident_start(at(i + 2)) {
                i += 2;
            }
            let word_start = if i > start { i } else { start };
            while i < n && is_ident(chars[i]) {
                i += 1;
            }
            out.push(Tok::Ident(chars[word_start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            while i < n && (is_ident(chars[i]) || chars[i] == '.' && at(i + 1).is_ascii_digit()) {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Tok::PathSep);
            i += 2;
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    out
}

fn ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// The tokens without the items under `#[cfg(test)]` (an item ends at its first `;` or at the end of
/// its first `{ … }` block, outside parentheses and brackets).
fn without_tests(toks: &[Tok]) -> Vec<Tok> {
    let cfg_test = [
        Tok::Punct('#'),
        Tok::Punct('['),
        Tok::Ident("cfg".into()),
        Tok::Punct('('),
        Tok::Ident("test".into()),
        Tok::Punct(')'),
        Tok::Punct(']'),
    ];
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if !toks[i..].starts_with(&cfg_test) {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        i += cfg_test.len();
        let mut depth = 0usize;
        while i < toks.len() {
            match &toks[i] {
                Tok::Punct('(' | '[') => depth += 1,
                Tok::Punct(')' | ']') => depth = depth.saturating_sub(1),
                Tok::Punct(';') if depth == 0 => break,
                Tok::Punct('{') if depth == 0 => {
                    let mut braces = 0usize;
                    while i < toks.len() {
                        match toks[i] {
                            Tok::Punct('{') => braces += 1,
                            Tok::Punct('}') => {
                                braces -= 1;
                                if braces == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        i += 1;
    }
    out
}

/// One name a `use` declaration brings in: `local` (`None` for a glob) stands for `path`, as
/// written.
#[derive(Debug, PartialEq)]
struct UseItem {
    local: Option<String>,
    path: Vec<String>,
}

/// The items of the use tree that starts at `toks[*i]`, up to its `;` (left at `*i`).
fn use_tree(toks: &[Tok], i: &mut usize, prefix: &[String], out: &mut Vec<UseItem>) {
    let mut path = prefix.to_vec();
    while *i < toks.len() {
        match &toks[*i] {
            Tok::Ident(s) if s == "as" => {
                *i += 1;
                let local = ident(toks.get(*i)).map(str::to_string);
                *i += 1;
                out.push(UseItem {
                    local,
                    path: std::mem::take(&mut path),
                });
            }
            Tok::Ident(s) => {
                path.push(s.clone());
                *i += 1;
            }
            Tok::PathSep => *i += 1,
            Tok::Punct('*') => {
                out.push(UseItem {
                    local: None,
                    path: std::mem::take(&mut path),
                });
                *i += 1;
            }
            Tok::Punct('{') => {
                *i += 1;
                loop {
                    use_tree(toks, i, &path, out);
                    match toks.get(*i) {
                        Some(Tok::Punct(',')) => *i += 1,
                        _ => break,
                    }
                    if toks.get(*i) == Some(&Tok::Punct('}')) {
                        break;
                    }
                }
                *i += 1; // the `}`
                path.clear();
            }
            // `,` `}` `;` end this tree.
            _ => break,
        }
    }
    if let Some(last) = path.last() {
        // `use a::b;` brings in `b`; `use a::{self}` brings in `a`.
        let local = if last == "self" {
            path.pop();
            path.last().cloned()
        } else {
            Some(last.clone())
        };
        out.push(UseItem { local, path });
    }
}

/// A `use` declaration: where it stands and what it brings in.
#[derive(Debug)]
struct UseDecl {
    /// The module (an inline `mod x { … }` included) whose scope it is in.
    module: ModPath,
    /// At the module's item level (not inside a function or block).
    item_level: bool,
    /// `pub use` (not `pub(crate)`, not private): a re-export users can name.
    public: bool,
    items: Vec<UseItem>,
}

/// A path written in code (outside `use` declarations): its segments as written.
#[derive(Debug)]
struct CodePath {
    module: ModPath,
    segments: Vec<String>,
}

/// What the check reads of one source file.
#[derive(Debug)]
struct SourceFile {
    /// Relative to the crate's directory (`src/log/model.rs`).
    name: String,
    uses: Vec<UseDecl>,
    paths: Vec<CodePath>,
    /// The inline modules it defines (`counter_type::bits`), as module paths.
    inline_modules: Vec<ModPath>,
    /// The modules it declares `pub mod` (not `pub(crate)`), files or inline, as module paths.
    public_modules: Vec<ModPath>,
    /// The types it declares `pub` at a module's item level (`struct`, `enum`, `trait`, `type`,
    /// `union`): the module and the name.
    public_types: Vec<(ModPath, String)>,
}

fn read_file(name: String, module: &ModPath, text: &str) -> SourceFile {
    let toks = without_tests(&tokens(text));
    let mut uses = Vec::new();
    let mut paths = Vec::new();
    let mut inline_modules = Vec::new();
    let mut public_modules = Vec::new();
    let mut public_types = Vec::new();
    // The open braces: `Some(name)` for an inline module's, `None` for any other.
    let mut scopes: Vec<Option<String>> = Vec::new();
    let current = |scopes: &[Option<String>]| -> ModPath {
        let mut m = module.clone();
        m.extend(scopes.iter().flatten().cloned());
        m
    };
    // Declared `pub` exactly: `pub(crate)` ends in `)`.
    let is_pub = |i: usize| i.checked_sub(1).map(|j| &toks[j]) == Some(&Tok::Ident("pub".into()));
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('{') => {
                let before = |k: usize| i.checked_sub(k).map(|j| &toks[j]);
                let name = match (before(2), before(1)) {
                    (Some(Tok::Ident(m)), Some(Tok::Ident(name))) if m == "mod" => {
                        Some(name.clone())
                    }
                    _ => None,
                };
                scopes.push(name);
                if scopes.last().is_some_and(Option::is_some) {
                    inline_modules.push(current(&scopes));
                }
                i += 1;
            }
            Tok::Punct('}') => {
                scopes.pop();
                i += 1;
            }
            Tok::Ident(kw) if kw == "use" => {
                let public = is_pub(i);
                i += 1;
                let mut items = Vec::new();
                use_tree(&toks, &mut i, &[], &mut items);
                uses.push(UseDecl {
                    module: current(&scopes),
                    item_level: scopes.last().is_none_or(Option::is_some),
                    public,
                    items,
                });
            }
            Tok::Ident(kw)
                if matches!(
                    kw.as_str(),
                    "mod" | "struct" | "enum" | "trait" | "type" | "union"
                ) && is_pub(i)
                    && scopes.last().is_none_or(Option::is_some) =>
            {
                if let Some(name) = ident(toks.get(i + 1)) {
                    if kw == "mod" {
                        let mut m = current(&scopes);
                        m.push(name.to_string());
                        public_modules.push(m);
                    } else {
                        public_types.push((current(&scopes), name.to_string()));
                    }
                }
                i += 1;
            }
            Tok::Ident(first)
                if toks.get(i + 1) == Some(&Tok::PathSep)
                    && !matches!(
                        i.checked_sub(1).map(|j| &toks[j]),
                        Some(Tok::PathSep | Tok::Punct('.'))
                    ) =>
            {
                let mut segments = vec![first.clone()];
                i += 1;
                while toks.get(i) == Some(&Tok::PathSep) {
                    match toks.get(i + 1) {
                        Some(Tok::Ident(s)) => segments.push(s.clone()),
                        _ => break,
                    }
                    i += 2;
                }
                paths.push(CodePath {
                    module: current(&scopes),
                    segments,
                });
            }
            _ => i += 1,
        }
    }
    SourceFile {
        name,
        uses,
        paths,
        inline_modules,
        public_modules,
        public_types,
    }
}

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<_> = fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for e in entries {
            rust_files(&e, out);
        }
    } else if path.is_file() && path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// The module a file under `src` is (`log/mod.rs` and `log.rs` are `log`; `lib.rs`, `main.rs` the
/// root).
fn module_of(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") || !parts.is_empty() && stem != "mod" {
        parts.push(stem.to_string());
    }
    parts
}

// --- The graph -------------------------------------------------------------------------------------

/// An edge's cause: the path as written, for the message.
#[derive(Clone, Debug)]
struct Edge {
    to: usize,
    via: String,
}

/// One crate's files and the edges among them.
#[derive(Debug)]
struct Graph {
    /// The crate's directory name, for messages (`perfcounters-cli`).
    crate_dir: String,
    files: Vec<SourceFile>,
    /// Module path → index in `files`.
    by_module: BTreeMap<ModPath, usize>,
    inline: BTreeSet<ModPath>,
    /// (module, name) → the absolute path of what the module's item-level `use` brings in as `name`.
    imports: BTreeMap<(ModPath, String), ModPath>,
    edges: Vec<Vec<Edge>>,
}

impl Graph {
    fn read(crate_dir: &Path) -> Graph {
        let src = crate_dir.join("src");
        let mut list = Vec::new();
        rust_files(&src, &mut list);
        let sources = list
            .iter()
            .filter(|path| path.file_name().unwrap() != "tests.rs") // a unit test module's file
            .map(|path| {
                let rel = path.strip_prefix(&src).unwrap();
                let rel = rel.to_string_lossy().replace('\\', "/");
                (rel, fs::read_to_string(path).unwrap())
            })
            .collect();
        let crate_dir = crate_dir.file_name().unwrap().to_string_lossy();
        Graph::from_sources(&crate_dir, sources)
    }

    /// The graph of a crate named `crate_dir` whose `src` holds `sources` (path under `src`, with
    /// `/`; text).
    fn from_sources(crate_dir: &str, sources: Vec<(String, String)>) -> Graph {
        let mut files = Vec::new();
        let mut by_module = BTreeMap::new();
        for (rel, text) in sources {
            let module = module_of(Path::new(&rel));
            by_module.insert(module.clone(), files.len());
            files.push(read_file(format!("src/{rel}"), &module, &text));
        }
        let inline = files
            .iter()
            .flat_map(|f| f.inline_modules.iter().cloned())
            .collect();
        let mut graph = Graph {
            crate_dir: crate_dir.to_string(),
            files,
            by_module,
            inline,
            imports: BTreeMap::new(),
            edges: Vec::new(),
        };
        let mut imports = BTreeMap::new();
        for file in &graph.files {
            for decl in file.uses.iter().filter(|d| d.item_level) {
                for item in &decl.items {
                    let (Some(local), Some(abs)) =
                        (&item.local, graph.absolute(&decl.module, &item.path, None))
                    else {
                        continue;
                    };
                    imports.insert((decl.module.clone(), local.clone()), abs);
                }
            }
        }
        graph.imports = imports;
        graph.edges = (0..graph.files.len()).map(|f| graph.edges_of(f)).collect();
        graph
    }

    fn is_module(&self, path: &[String]) -> bool {
        self.by_module.contains_key(path) || self.inline.contains(path)
    }

    /// The absolute path of `segments`, written in `module`, if it names something of this crate.
    /// `imports` resolves names brought in by a `use` of the same scope (code paths).
    fn absolute(
        &self,
        module: &ModPath,
        segments: &[String],
        imports: Option<&BTreeMap<(ModPath, String), ModPath>>,
    ) -> Option<ModPath> {
        let (first, rest) = segments.split_first()?;
        let mut abs = match first.as_str() {
            "crate" => Vec::new(),
            "self" => module.clone(),
            "super" => {
                let mut m = module.clone();
                m.pop()?;
                let mut rest = rest;
                while rest.first().is_some_and(|s| s == "super") {
                    m.pop()?;
                    rest = &rest[1..];
                }
                m.extend(rest.iter().cloned());
                return Some(m);
            }
            _ => {
                let mut child = module.clone();
                child.push(first.clone());
                if self.is_module(&child) {
                    child
                } else if let Some(abs) =
                    imports.and_then(|m| m.get(&(module.clone(), first.clone())))
                {
                    abs.clone()
                } else {
                    return None;
                }
            }
        };
        abs.extend(rest.iter().cloned());
        Some(abs)
    }

    /// The file that defines what `path` names, following imports (a re-export leads to what it
    /// re-exports).
    fn defining_file(&self, path: &[String]) -> usize {
        let mut path = path.to_vec();
        for _ in 0..32 {
            let mut k = path.len();
            while !self.by_module.contains_key(&path[..k]) {
                k -= 1;
            }
            while k < path.len() && self.inline.contains(&path[..=k]) {
                k += 1;
            }
            let Some(target) = path
                .get(k)
                .and_then(|name| self.imports.get(&(path[..k].to_vec(), name.clone())))
            else {
                break;
            };
            let mut next = target.clone();
            next.extend(path[k + 1..].iter().cloned());
            path = next;
        }
        let mut k = path.len();
        while !self.by_module.contains_key(&path[..k]) {
            k -= 1;
        }
        self.by_module[&path[..k]]
    }

    fn edges_of(&self, file: usize) -> Vec<Edge> {
        let f = &self.files[file];
        let file_module = &module_of_name(&f.name);
        let mut out: Vec<Edge> = Vec::new();
        let mut add = |to: usize, via: String| {
            // A file's own submodules are the module tree, not an edge.
            let within = module_of_name(&self.files[to].name).starts_with(file_module);
            if !within && !out.iter().any(|e| e.to == to) {
                out.push(Edge { to, via });
            }
        };
        for decl in &f.uses {
            for item in &decl.items {
                let Some(abs) = self.absolute(&decl.module, &item.path, None) else {
                    continue;
                };
                let to = self.defining_file(&abs);
                add(to, item.path.join("::"));
            }
        }
        for p in &f.paths {
            let Some(abs) = self.absolute(&p.module, &p.segments, Some(&self.imports)) else {
                continue;
            };
            add(self.defining_file(&abs), p.segments.join("::"));
        }
        out
    }

    /// Whether users can name `module`: the root, and every module declared `pub mod` in one they
    /// can name.
    fn is_public_module(&self, module: &[String]) -> bool {
        let declared: BTreeSet<&[String]> = self
            .files
            .iter()
            .flat_map(|f| &f.public_modules)
            .map(|m| m.as_slice())
            .collect();
        (1..=module.len()).all(|k| declared.contains(&&module[..k]))
    }

    /// The crate's public types: for each name users can write, each type definition (module and
    /// name where it is declared) it names, with the public paths that name it. A type is public
    /// when it is declared `pub` in a public module, or a `pub use` of a public module re-exports
    /// it (following re-exports of re-exports to the declaration).
    fn public_types(&self) -> BTreeMap<String, BTreeMap<(ModPath, String), BTreeSet<String>>> {
        let declared: BTreeSet<(ModPath, String)> = self
            .files
            .iter()
            .flat_map(|f| f.public_types.iter().cloned())
            .collect();
        let shown = |module: &[String], name: &str| {
            let mut path = vec![self.crate_dir.replace('-', "_")];
            path.extend(module.iter().cloned());
            path.push(name.to_string());
            path.join("::")
        };
        let mut out: BTreeMap<String, BTreeMap<(ModPath, String), BTreeSet<String>>> =
            BTreeMap::new();
        for (module, name) in declared.iter().filter(|(m, _)| self.is_public_module(m)) {
            out.entry(name.clone())
                .or_default()
                .entry((module.clone(), name.clone()))
                .or_default()
                .insert(shown(module, name));
        }
        let reexports = self
            .files
            .iter()
            .flat_map(|f| &f.uses)
            .filter(|d| d.public && d.item_level && self.is_public_module(&d.module));
        for decl in reexports {
            for item in &decl.items {
                let Some(local) = &item.local else { continue };
                let mut target = self.absolute(&decl.module, &item.path, None);
                for _ in 0..32 {
                    let Some((name, module)) = target.as_ref().and_then(|t| t.split_last()) else {
                        break;
                    };
                    let key = (module.to_vec(), name.clone());
                    if declared.contains(&key) {
                        out.entry(local.clone())
                            .or_default()
                            .entry(key)
                            .or_default()
                            .insert(shown(&decl.module, local));
                        break;
                    }
                    target = self.imports.get(&key).cloned();
                }
            }
        }
        out
    }

    /// One line per name that users can write for two public types: each type's public paths and
    /// the file that declares it.
    fn shared_type_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, defs) in self.public_types() {
            if defs.len() < 2 {
                continue;
            }
            let each: Vec<String> = defs
                .iter()
                .map(|((module, declared), paths)| {
                    let mut at = module.clone();
                    at.push(declared.clone());
                    let file = &self.files[self.defining_file(&at)].name;
                    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
                    format!("{} ({file})", paths.join(" = "))
                })
                .collect();
            out.push(format!("`{name}`: {}", each.join(", ")));
        }
        out
    }

    /// Every `crate::Name` (a use or inline path) where `Name` is one the crate root imports.
    fn root_reexport_uses(&self) -> Vec<String> {
        let mut out = Vec::new();
        for f in &self.files {
            let written = f
                .uses
                .iter()
                .flat_map(|d| d.items.iter().map(|i| i.path.clone()))
                .chain(f.paths.iter().map(|p| p.segments.clone()));
            for path in written {
                if let [first, name, ..] = path.as_slice() {
                    if first == "crate" && self.imports.contains_key(&(Vec::new(), name.clone())) {
                        out.push(format!("{}: {}", f.name, path.join("::")));
                    }
                }
            }
        }
        out
    }

    fn file(&self, name: &str) -> usize {
        self.files
            .iter()
            .position(|f| f.name == name)
            .unwrap_or_else(|| panic!("no file {name} in {}", self.crate_dir))
    }

    fn has_edge(&self, from: &str, to: &str) -> bool {
        let to = self.file(to);
        self.edges[self.file(from)].iter().any(|e| e.to == to)
    }

    /// One cycle of each group of files that reach one another, as a chain of files with the path
    /// that makes each step.
    fn cycles(&self) -> Vec<String> {
        let n = self.files.len();
        let reach = |from: usize| -> Vec<bool> {
            let mut seen = vec![false; n];
            let mut queue = VecDeque::from([from]);
            while let Some(f) = queue.pop_front() {
                for e in &self.edges[f] {
                    if !seen[e.to] {
                        seen[e.to] = true;
                        queue.push_back(e.to);
                    }
                }
            }
            seen
        };
        let reaches: Vec<Vec<bool>> = (0..n).map(reach).collect();
        let mut reported = vec![false; n];
        let mut out = Vec::new();
        for start in 0..n {
            if reported[start] || !reaches[start][start] {
                continue;
            }
            // The group: files on a cycle through `start`.
            for (f, flag) in reported.iter_mut().enumerate() {
                if reaches[start][f] && reaches[f][start] {
                    *flag = true;
                }
            }
            // The shortest cycle through `start` (breadth first).
            let mut prev: Vec<Option<(usize, usize)>> = vec![None; n];
            let mut queue = VecDeque::from([start]);
            'search: while let Some(f) = queue.pop_front() {
                for (k, e) in self.edges[f].iter().enumerate() {
                    if prev[e.to].is_none() {
                        prev[e.to] = Some((f, k));
                        if e.to == start {
                            break 'search;
                        }
                        queue.push_back(e.to);
                    }
                }
            }
            let mut steps = Vec::new();
            let mut at = start;
            loop {
                let (from, k) = prev[at].unwrap();
                steps.push((from, &self.edges[from][k].via));
                at = from;
                if at == start {
                    break;
                }
            }
            steps.reverse();
            let mut chain = String::new();
            for (from, via) in steps {
                chain.push_str(&format!("{} --({via})--> ", self.files[from].name));
            }
            chain.push_str(&self.files[start].name);
            out.push(format!("{}: {chain}", self.crate_dir));
        }
        out
    }
}

/// The module of a file named `src/…` (as in [`SourceFile::name`]).
fn module_of_name(name: &str) -> ModPath {
    module_of(Path::new(name.strip_prefix("src/").unwrap()))
}

fn library() -> Graph {
    Graph::read(Path::new(env!("CARGO_MANIFEST_DIR")))
}

fn command() -> Graph {
    Graph::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../perfcounters-cli"))
}

// --- The checks ------------------------------------------------------------------------------------

#[test]
fn no_file_imports_one_that_imports_it_back() {
    let mut cycles = Vec::new();
    for graph in [library(), command()] {
        assert!(
            graph.files.len() > 20,
            "{} has its sources",
            graph.crate_dir
        );
        cycles.extend(graph.cycles());
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_library_imports_nothing_through_the_crate_roots_reexports() {
    let found = library().root_reexport_uses();
    assert!(
        found.is_empty(),
        "name the defining module instead of the crate root's re-export:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_two_public_types_of_the_library_share_a_name() {
    let lib = library();
    let shared = lib.shared_type_names();
    assert!(
        shared.is_empty(),
        "public types that share a name (rename one so that each name is one type):\n{}",
        shared.join("\n")
    );
    // The check sees the public surface: declarations in public modules and re-exports from
    // private ones.
    let types = lib.public_types();
    let paths = |name: &str| -> Vec<String> { types[name].values().flatten().cloned().collect() };
    assert_eq!(
        paths("Snapshot"),
        ["perfcounters::Snapshot", "perfcounters::snapshot::Snapshot"]
    );
    assert_eq!(paths("PdhRecord"), ["perfcounters::format::blg::PdhRecord"]);
    assert_eq!(
        paths("MetricSample"),
        ["perfcounters::export::MetricSample"]
    );
    assert!(types.len() > 250, "{} public type names", types.len());
}

#[test]
fn a_shared_public_type_name_is_reported_with_both_paths() {
    let source = |path: &str, text: &str| (path.to_string(), text.to_string());
    let graph = Graph::from_sources(
        "demo",
        vec![
            source(
                "lib.rs",
                "pub mod a; pub mod b; mod c; pub use c::Thing; pub(crate) struct Hidden;",
            ),
            source("a.rs", "pub struct Thing<'x>(&'x u8); pub enum Other {}"),
            source(
                "b.rs",
                "pub mod inner { pub struct Item; } mod private { pub struct Item; }\n\
                 pub use private::Item as Renamed; fn f() { pub struct Thing; }",
            ),
            source(
                "c.rs",
                "pub struct Thing; pub struct Hidden; pub(crate) trait Other {}",
            ),
        ],
    );
    assert_eq!(
        graph.shared_type_names(),
        ["`Thing`: demo::a::Thing (src/a.rs), demo::Thing (src/c.rs)"]
    );
    let names: Vec<String> = graph.public_types().into_keys().collect();
    assert_eq!(names, ["Item", "Other", "Renamed", "Thing"]);
}

#[test]
fn the_check_sees_the_edges_it_is_meant_to_see() {
    let lib = library();
    // Top-level modules, through `crate::`.
    assert!(lib.has_edge("src/query/expand.rs", "src/suggest.rs"));
    assert!(lib.has_edge("src/source/mod.rs", "src/suggest.rs"));
    // A parent's re-export of a sibling is an edge to the sibling.
    assert!(lib.has_edge("src/log/open.rs", "src/log/blg.rs"));
    // A child re-exported by its parent is no edge back to the parent.
    assert!(!lib.has_edge("src/log/mod.rs", "src/log/model.rs"));
    // The PDH-CSV row layer stands only on the log's errors and times.
    let row: BTreeSet<&str> = lib.edges[lib.file("src/log/pdh_csv_row.rs")]
        .iter()
        .map(|e| lib.files[e.to].name.as_str())
        .collect();
    assert_eq!(row, BTreeSet::from(["src/log/error.rs", "src/log/time.rs"]));
    let cli = command();
    assert!(cli.has_edge("src/relog.rs", "src/table.rs"));
    assert!(cli.has_edge("src/output.rs", "src/table.rs"));
}

#[test]
fn paths_are_read_from_use_trees_and_code() {
    let file = read_file(
        "src/a/b.rs".into(),
        &vec!["a".into(), "b".into()],
        "use crate::a::B; // crate::x\n\
         pub use super::{c::D, e as f, g::{self, h}};\n\
         /* crate::y */ let s = \"crate::z\"; let c = '\"'; let q = '\\''; fn l<'a>() {}\n\
         let x = crate::i::j(); my_crate::k();\n\
         mod m { use super::n; }\n\
         #[cfg(test)]\nmod tests { use crate::t; }\n",
    );
    let uses: Vec<(bool, Vec<String>)> = file
        .uses
        .iter()
        .flat_map(|d| {
            d.items.iter().map(|i| {
                let local = i.local.clone().unwrap_or_default();
                (d.item_level, vec![local, i.path.join("::")])
            })
        })
        .collect();
    let s = |a: &str, b: &str| vec![a.to_string(), b.to_string()];
    assert_eq!(
        uses,
        [
            (true, s("B", "crate::a::B")),
            (true, s("D", "super::c::D")),
            (true, s("f", "super::e")),
            (true, s("g", "super::g")),
            (true, s("h", "super::g::h")),
            (true, s("n", "super::n")),
        ]
    );
    assert_eq!(file.uses[2].module, ["a", "b", "m"]);
    let paths: Vec<String> = file.paths.iter().map(|p| p.segments.join("::")).collect();
    assert_eq!(paths, ["crate::i::j", "my_crate::k"]);
    assert_eq!(file.inline_modules, [vec!["a", "b", "m"]]);
    assert_eq!(module_of(Path::new("log/mod.rs")), ["log"]);
    assert_eq!(module_of(Path::new("log/zone.rs")), ["log", "zone"]);
    assert!(module_of(Path::new("lib.rs")).is_empty());
    assert!(module_of(Path::new("main.rs")).is_empty());
}
