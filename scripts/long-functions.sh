#!/usr/bin/env bash
# Lists the functions of the workspace's non-test code that are longer than a limit, longest first:
# lines, file:line of the `fn`, name.
#
# Usage: scripts/long-functions.sh [LIMIT]
#   LIMIT  the most lines a function may have (default 150); longer ones are listed
#
# Reads every `.rs` file under `crates/*/src` except `tests.rs` files. A function counts from its `fn`
# line to its closing brace, both included; nested functions are counted on their own too. Items
# marked `#[cfg(test)]` (test modules, test helpers) and `#[test]` functions are left out. The code
# must be formatted by rustfmt: a body ends at the first line that is a `}` at the indentation of its
# `fn`. Exits with 1 when it lists a function, 0 when none is over the limit.
set -euo pipefail

limit=${1:-150}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

find crates/*/src -name '*.rs' ! -name tests.rs -print0 | sort -z | xargs -0 awk -v limit="$limit" '
function indent_of(line) {
    match(line, /^[ \t]*/)
    return substr(line, 1, RLENGTH)
}
FNR == 1 {
    depth = 0; skip = ""; skipping = 0; test_attr = 0; test_open = 0; sig = 0
}
{
    line = $0
    # Inside a test item: skip to its closing brace.
    if (skipping) {
        if (line == skip "}") skipping = 0
        next
    }
    # A test item whose first line did not open it yet (a long signature).
    if (test_open) {
        if (line ~ /\{[ \t]*$/) { skipping = 1; test_open = 0 }
        else if (line ~ /;[ \t]*$/ || line ~ /\}[ \t]*$/) test_open = 0
        next
    }
    if (line ~ /^[ \t]*#\[(cfg\((all\()?test[,)]|test\])/) { test_attr = 1; next }
    if (test_attr) {
        if (line ~ /^[ \t]*(#\[|\/\/)/) next
        test_attr = 0
        skip = indent_of(line)
        if (line ~ /\{[ \t]*$/) skipping = 1
        else if (!(line ~ /;[ \t]*$/ || line ~ /\}[ \t]*$/)) test_open = 1
        next
    }
    # A signature spread over several lines: its body opens on the line that ends with `{`.
    if (sig) {
        if (line ~ /\{[ \t]*$/) { sig = 0; depth++ }
        else if (line ~ /;[ \t]*$/) sig = 0
        else next
    }
    if (line ~ /^[ \t]*(pub(\([^)]*\))? +)?((const|async|unsafe|default|extern +"[^"]*") +)*fn +[A-Za-z_][A-Za-z0-9_]*/) {
        name = line
        sub(/^.*fn +/, "", name)
        match(name, /^[A-Za-z_][A-Za-z0-9_]*/)
        name = substr(name, 1, RLENGTH)
        ind[depth + 1] = indent_of(line)
        nm[depth + 1] = name
        st[depth + 1] = FNR
        if (line ~ /\{[ \t]*$/) depth++
        else if (line ~ /;[ \t]*$/ || line ~ /\}[ \t]*$/) { }
        else sig = 1
        next
    }
    if (depth > 0 && line == ind[depth] "}") {
        n = FNR - st[depth] + 1
        if (n > limit) printf "%5d  %s:%d  %s\n", n, FILENAME, st[depth], nm[depth]
        depth--
    }
}
' | sort -rn | { found=0; while IFS= read -r l; do echo "$l"; found=1; done; exit $((found)); }
