//! The library's top-level modules import one another without a cycle: no module uses one that uses
//! it back, directly or through others.
//!
//! The check reads the sources: every `crate::name` path outside comments (in `use` lines, grouped
//! `use crate::{…}` lists and inline paths) of the files of a top-level module `src/name.rs` or
//! `src/name/` is an edge to that module; the crate root's re-exports (`crate::CounterType` …) count
//! as the module they come from. Unit tests are left out (`tests.rs` files and the `#[cfg(test)] mod
//! tests { … }` at the end of a file): a test may drive one module through another.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The crate root's re-exports and the module each comes from (`lib.rs`'s `pub use` lines).
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest.trim_end_matches(';');
        let Some((module, items)) = rest.split_once("::") else {
            continue;
        };
        let items = items.trim_matches(|c| c == '{' || c == '}');
        for item in items.split(',') {
            let item = item.trim();
            if !item.is_empty() {
                map.insert(item.to_string(), module.to_string());
            }
        }
    }
    map
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

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The first path segments after `crate::` in `code`, grouped lists included.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before_ok = rest[..i].chars().next_back().is_none_or(|c| !is_ident(c));
        rest = &rest[i + "crate::".len()..];
        if !before_ok {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a::b, C}`: the first segment of each item at the group's top level.
            let mut depth = 0usize;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && is_ident(c) => {
                        let name: String =
                            group[j..].chars().take_while(|&c| is_ident(c)).collect();
                        out.push(name);
                        item_start = false;
                    }
                    c if c.is_whitespace() => {}
                    _ => item_start = false,
                }
            }
        } else {
            let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// The code of a source file without its comments (`//` to the end of a line; the crate uses no
/// block comments around paths) and without its unit tests (from `#[cfg(test)]` before `mod tests {`
/// to the end).
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Module → the other top-level modules it uses.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let reexports = root_reexports(&lib);
    let modules: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect();
    assert!(modules.len() > 10, "lib.rs lists its modules: {modules:?}");
    let mut graph = BTreeMap::new();
    for module in &modules {
        let mut files = Vec::new();
        rust_files(&src.join(format!("{module}.rs")), &mut files);
        rust_files(&src.join(module), &mut files);
        assert!(!files.is_empty(), "no source of module {module}");
        let mut uses = BTreeSet::new();
        for file in files.into_iter().filter(|f| !f.ends_with("tests.rs")) {
            let code = code_of(&fs::read_to_string(&file).unwrap());
            for name in crate_paths(&code) {
                let target = reexports.get(&name).cloned().unwrap_or(name);
                if modules.contains(&target) && &target != module {
                    uses.insert(target);
                }
            }
        }
        graph.insert(module.clone(), uses);
    }
    graph
}

/// A cycle through `start`, if any (depth-first search).
fn cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn walk(
        graph: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        let last = path.last().unwrap().clone();
        for next in &graph[&last] {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    let mut seen = BTreeSet::new();
    walk(graph, start, &mut path, &mut seen).then_some(path)
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let graph = module_graph();
    for module in graph.keys() {
        if let Some(cycle) = cycle_from(&graph, module) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
    // The check sees the edges it is meant to see.
    assert!(graph["query"].contains("source"), "{graph:?}");
    assert!(graph["query"].contains("suggest"), "{graph:?}");
    assert!(graph["source"].contains("suggest"), "{graph:?}");
    assert!(graph["suggest"].is_empty(), "suggest is a leaf: {graph:?}");
}

#[test]
fn paths_are_found_in_use_lines_groups_and_code() {
    let code = "use crate::a::B;\nuse crate::{c::D, e, f::{g, h}};\nlet x = crate::i::j();\nmy_crate::k();";
    assert_eq!(crate_paths(code), ["a", "c", "e", "f", "i"]);
    assert_eq!(
        code_of("use crate::a; // crate::b\n// crate::c\nx"),
        "use crate::a; \n\nx"
    );
    assert_eq!(
        code_of("use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n}\n"),
        "use crate::a;"
    );
    let lib = "pub use calc::{calculate, FormatOptions};\npub use raw::RawCounter;\n";
    let map = root_reexports(lib);
    assert_eq!(map["FormatOptions"], "calc");
    assert_eq!(map["calculate"], "calc");
    assert_eq!(map["RawCounter"], "raw");
}
