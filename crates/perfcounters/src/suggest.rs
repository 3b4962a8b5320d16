//! Close names for a name that is not known: what "did you mean …?" offers.
//!
//! A leaf module: it uses nothing of the crate, so every module that reports an unknown name (the
//! [`query`](crate::query), the [`source`](crate::source) catalogs, the command line) can use it
//! without importing one another.
//!
//! ```
//! use perfcounters::suggest::{suggest, DidYouMean};
//! let names = ["Processor", "Process", "Memory"];
//! let close = suggest("Procesor", names.iter().copied());
//! assert_eq!(close, ["Processor", "Process"]);
//! assert_eq!(
//!     DidYouMean(&close).to_string(),
//!     "; did you mean \"Processor\" or \"Process\"?"
//! );
//! ```

use std::fmt;

use crate::path::fold_case;

/// Close names as the library's errors end a message: `; did you mean "Processor"?`,
/// `; did you mean "a", "b" or "c"?`, and nothing without names.
///
/// ```
/// use perfcounters::suggest::DidYouMean;
/// let names = ["Processor".to_string(), "Process".to_string()];
/// assert_eq!(
///     format!("no object named \"Procesor\"{}", DidYouMean(&names)),
///     "no object named \"Procesor\"; did you mean \"Processor\" or \"Process\"?"
/// );
/// assert_eq!(DidYouMean(&[]).to_string(), "");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct DidYouMean<'a>(pub &'a [String]);

impl fmt::Display for DidYouMean<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            [] => Ok(()),
            [one] => write!(f, "; did you mean \"{one}\"?"),
            many => {
                f.write_str("; did you mean ")?;
                for (i, s) in many.iter().enumerate() {
                    if i > 0 {
                        f.write_str(if i + 1 == many.len() { " or " } else { ", " })?;
                    }
                    write!(f, "\"{s}\"")?;
                }
                f.write_str("?")
            }
        }
    }
}

/// Up to three names close to `wanted`: case-insensitive edit distance within a third of the length
/// (at least 2), or containing / contained in it. Case is ignored by the rule of names
/// ([`fold_case`]).
pub fn suggest<'a>(wanted: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    let w: Vec<char> = fold_case(wanted).chars().filter(|c| *c != '*').collect();
    if w.is_empty() {
        return Vec::new();
    }
    let limit = (w.len() / 3).max(2);
    let wanted_lower: String = w.iter().collect();
    let mut scored: Vec<(usize, String)> = Vec::new();
    for c in candidates {
        let lc = fold_case(c);
        let d = edit_distance(&w, &lc.chars().collect::<Vec<_>>());
        let score = if d <= limit {
            d
        } else if w.len() >= 3
            && (lc.contains(wanted_lower.as_str()) || wanted_lower.contains(lc.as_ref()))
        {
            limit + 1 + lc.chars().count().abs_diff(w.len())
        } else {
            continue;
        };
        if !scored.iter().any(|(_, s)| s == c) {
            scored.push((score, c.to_string()));
        }
    }
    scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().take(3).map(|(_, s)| s).collect()
}

/// The Levenshtein distance of two strings of characters (insertions, deletions and substitutions
/// each cost 1), with two rows of the table.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}
