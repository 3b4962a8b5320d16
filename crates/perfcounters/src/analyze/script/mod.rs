//! The PowerShell subset of PAL threshold code, read and evaluated without ever running it.
//!
//! PAL evaluates a threshold's `CODE`, and a generated data source's, with `Invoke-Expression`.
//! This module reads the same text as data: a small lexer and parser build a tree of the
//! constructs the threshold files use, and an interpreter walks it with a fixed budget.
//! Supported (`docs/analyze.md` has the table, with examples and limits):
//!
//! * assignments `$x = …`, typed (`[Int] $x = …`), compound (`+=` …), `$i++` / `$i--` / `++$i`,
//!   to an index (`$a[$i] = …`) or a hash table's key (`$h.Key = …`);
//! * numbers with the `KB`/`MB`/`GB`/`TB`/`PB` suffixes, strings in single or double quotes,
//!   double quotes expanding `$x` and `$( … )`, `$True`, `$False`, `$null`;
//! * arrays (`@( … )`, `ArrayList`) and hash tables (`@{ … }`, `Hashtable`), shared by
//!   reference as .NET objects, indexing, `.Count`, `.Add`, `.Keys` …;
//! * arithmetic, comparisons (strings case-insensitively, as PowerShell does), `-and`, `-or`,
//!   `-not`, `-like`, `-contains`, `-match` and `-replace` (regular expressions of the `regex`
//!   crate: linear time, bounded size);
//! * the casts `[Int]`, `[Int64]`, `[Double]`, `[String]`, `[Void]`, and `[Math]::Round`, `Abs`,
//!   `Floor`, `Ceiling`, `Truncate`, `Sqrt`, `Min`, `Max`, `Pow`;
//! * string methods with .NET's rules (`.Substring`, `.IndexOf`, `.Contains`, `.Replace`,
//!   `.Split`, `.Trim`, `.StartsWith` …, `.Length`): a position out of range is an error;
//! * `If / ElseIf / Else`, `switch`, `For`, `ForEach`, `While`, `break`, `continue`;
//! * the calls `StaticThreshold …` (recorded, [`Script::evaluate`]), `CreateAlert …` (in a time
//!   slice, [`Script::create_alerts`]) and PAL's helpers `IsGreaterThanZero` and
//!   `ExtractSqlNamedInstanceFromCounterObjectPath`;
//! * a data source's counter instances in one time slice ([`CounterInstance`]): the code of a
//!   generated data source fills a hash table of series ([`Script::generate`]).
//!
//! Anything else (other commands, methods and .NET types, `Do` loops, functions) is [`ScriptError::Unsupported`], naming the line; the caller lists the analysis as
//! not evaluated. The work is bounded: code length and nesting depth are capped when parsing,
//! statements executed (each round of a loop counting), array and hash table entries and string
//! bytes made when evaluating ([`ScriptError::Exceeded`], naming the line: a loop that does not
//! end names the loop), so evaluation always ends. Numbers are `f64`; `[Int]` rounds half to even
//! and must fit `Int32`, as in PowerShell.
//!
//! One departure from PowerShell, on purpose: a string that reads as a number (a `QUESTION`'s
//! `DEFAULTVALUE="2048"`) compares and computes as that number. PowerShell would compare `'512'
//! -gt 2048` as text (and find it true); the files mean the number.
//!
//! This module holds the values, errors and entry points; the lexer (`lex`), the syntax tree and
//! its parser (`parse`) and the interpreter (`eval`) are its private submodules.

use std::collections::HashMap;
use std::fmt;

mod eval;
mod lex;
mod parse;

/// How the interpreter says that code read counter instances outside a time slice.
const OUTSIDE_SLICE: &str = "outside a time slice";

/// The longest code accepted, in bytes.
pub const MAX_CODE_BYTES: usize = 64 * 1024;
/// The deepest nesting of blocks and parentheses accepted.
pub const MAX_DEPTH: usize = 32;
/// The most statements one evaluation executes (each round of a loop counts as one more).
pub const MAX_STATEMENTS: usize = 100_000;
/// The most array and hash table entries one evaluation makes.
pub const MAX_CELLS: usize = 1_000_000;
/// The longest string one evaluation makes, in bytes (and 64 times this, all its strings
/// together).
pub const MAX_STRING_BYTES: usize = 1 << 20;

/// Why code could not be evaluated. `line` is 1-based within the code.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScriptError {
    /// The code uses something outside the supported subset.
    Unsupported {
        /// The line.
        line: u32,
        /// What it is.
        what: String,
    },
    /// The code is malformed (an unclosed brace, a stray token …).
    Syntax {
        /// The line.
        line: u32,
        /// What is wrong.
        what: String,
    },
    /// Evaluation failed (division by zero, an unknown variable, a value of the wrong type …).
    Eval {
        /// The line.
        line: u32,
        /// What failed.
        what: String,
    },
    /// A bound was reached (code length, nesting depth).
    Limit(String),
    /// A bound was reached while evaluating the code at a line: a loop that does not end, more
    /// statements than [`MAX_STATEMENTS`], arrays or strings grown past [`MAX_CELLS`] or
    /// [`MAX_STRING_BYTES`].
    Exceeded {
        /// The line.
        line: u32,
        /// Which bound.
        what: String,
    },
}

impl ScriptError {
    /// Whether the code read a data source's counter instances, which only evaluating it in a
    /// time slice gives ([`Script::create_alerts`]).
    pub(crate) fn needs_slice(&self) -> bool {
        matches!(self, ScriptError::Unsupported { what, .. } if what.contains(OUTSIDE_SLICE))
    }

    /// The line of the problem (1-based within the code), when there is one.
    pub fn line(&self) -> Option<u32> {
        match self {
            ScriptError::Unsupported { line, .. }
            | ScriptError::Syntax { line, .. }
            | ScriptError::Eval { line, .. }
            | ScriptError::Exceeded { line, .. } => Some(*line),
            ScriptError::Limit(_) => None,
        }
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScriptError::Unsupported { line, what } => {
                write!(f, "line {line}: {what} is not evaluated")
            }
            ScriptError::Syntax { line, what } => write!(f, "line {line}: {what}"),
            ScriptError::Eval { line, what } => write!(f, "line {line}: {what}"),
            ScriptError::Exceeded { line, what } => {
                write!(f, "line {line}: {what}; stopped, not evaluated")
            }
            ScriptError::Limit(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for ScriptError {}

/// A value of the interpreter.
#[derive(Clone, Debug, PartialEq)]
pub enum ScriptValue {
    /// `$null`.
    Null,
    /// `$True` / `$False`.
    Bool(bool),
    /// A number.
    Number(f64),
    /// A string.
    Str(String),
    /// The counter instances of a data source: its `COLLECTIONVARNAME` and how many instances
    /// the log has.
    Collection {
        /// The variable name.
        name: String,
        /// The number of counter instances.
        count: usize,
    },
}

impl ScriptValue {
    /// A question's value: a string that reads as a number is that number.
    pub fn from_text(s: &str) -> ScriptValue {
        match parse_number(s.trim()) {
            Some(n) => ScriptValue::Number(n),
            None => ScriptValue::Str(s.to_owned()),
        }
    }
}

/// A comparison of `StaticThreshold -Operator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `gt`: a value greater than the threshold.
    Gt,
    /// `ge`: greater than or equal.
    Ge,
    /// `lt`: less than.
    Lt,
    /// `le`: less than or equal.
    Le,
    /// `eq`: equal.
    Eq,
}

impl Operator {
    /// The operator of a name (`gt`, `ge`, `lt`, `le`, `eq`, any case).
    pub fn parse(s: &str) -> Option<Operator> {
        Some(match s.to_ascii_lowercase().as_str() {
            "gt" => Operator::Gt,
            "ge" => Operator::Ge,
            "lt" => Operator::Lt,
            "le" => Operator::Le,
            "eq" => Operator::Eq,
            _ => return None,
        })
    }

    /// The name as PAL writes it.
    pub fn name(self) -> &'static str {
        match self {
            Operator::Gt => "gt",
            Operator::Ge => "ge",
            Operator::Lt => "lt",
            Operator::Le => "le",
            Operator::Eq => "eq",
        }
    }

    /// Whether `value` breaks a threshold `t` with this operator.
    pub fn breaks(self, value: f64, t: f64) -> bool {
        match self {
            Operator::Gt => value > t,
            Operator::Ge => value >= t,
            Operator::Lt => value < t,
            Operator::Le => value <= t,
            Operator::Eq => value == t,
        }
    }
}

/// One `StaticThreshold` call the code made.
#[derive(Clone, Debug, PartialEq)]
pub struct StaticThreshold {
    /// The collection variable (`COLLECTIONVARNAME` of a data source), without `$`.
    pub collection: String,
    /// The comparison.
    pub operator: Operator,
    /// The threshold.
    pub threshold: f64,
    /// `-IsTrendOnly $True`: the threshold applies to the trend, not to the values.
    pub trend_only: bool,
}

/// One counter instance of a data source in one time slice, as a generated data source's code
/// reads it (PAL's counter instance object): its path and names, and the slice's minimum,
/// average and maximum and the trend up to the slice's end (`None` where the slice holds no
/// value).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CounterInstance {
    /// `.CounterPath` (and `.Name`): the full path, `\\Machine\Object(Instance)\Counter`.
    pub path: String,
    /// `.CounterComputer`: the machine, without `\\`.
    pub computer: String,
    /// `.CounterObject`.
    pub object: String,
    /// `.CounterName`.
    pub counter: String,
    /// `.CounterInstance` (empty for an object without instances).
    pub instance: String,
    /// `.QuantizedMin[0]`.
    pub min: Option<f64>,
    /// `.QuantizedAvg[0]`, and `.Value[0]`.
    pub avg: Option<f64>,
    /// `.QuantizedMax[0]`.
    pub max: Option<f64>,
    /// `.QuantizedTrend[0]`, per hour.
    pub trend: Option<f64>,
}

/// One `CreateAlert` call of threshold code evaluated in a time slice: PAL's alert raised by the
/// code itself, on a counter instance, with the statistics it found broken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeAlert {
    /// `-CounterInstanceObject`'s `.CounterPath`.
    pub counter: String,
    /// `-IsMinThresholdBroken`.
    pub min: bool,
    /// `-IsAvgThresholdBroken`.
    pub avg: bool,
    /// `-IsMaxThresholdBroken`.
    pub max: bool,
    /// `-IsTrendThresholdBroken`.
    pub trend: bool,
}

/// A number as the code writes it (`2048`, `-1.5`, `100MB`): the `KB` … `PB` suffixes are powers
/// of 1024, any case. `None` for anything else, and for a value that is not finite.
fn parse_number(s: &str) -> Option<f64> {
    if s.is_empty() {
        return None;
    }
    let lower = s.to_ascii_lowercase();
    let (digits, mult) = [
        ("kb", 1024f64),
        ("mb", 1024f64 * 1024.0),
        ("gb", 1024f64 * 1024.0 * 1024.0),
        ("tb", 1024f64 * 1024.0 * 1024.0 * 1024.0),
        ("pb", 1024f64 * 1024.0 * 1024.0 * 1024.0 * 1024.0),
    ]
    .iter()
    .find_map(|(suffix, m)| lower.strip_suffix(suffix).map(|d| (d, *m)))
    .unwrap_or((lower.as_str(), 1.0));
    let (sign, body) = match digits.strip_prefix('-') {
        Some(b) => (-1.0, b),
        None => (1.0, digits),
    };
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'+' || b == b'-')
        || !body.as_bytes()[0].is_ascii_digit() && body.as_bytes()[0] != b'.'
    {
        return None;
    }
    body.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(|v| sign * v * mult)
}

/// Parsed threshold code, ready to evaluate any number of times.
#[derive(Clone, Debug)]
pub struct Script {
    body: Vec<parse::Stmt>,
}

impl Script {
    /// Parses `code`. An error names the line (1-based within `code`) and what could not be read.
    pub fn parse(code: &str) -> Result<Script, ScriptError> {
        Ok(Script {
            body: parse::parse(code)?,
        })
    }

    /// Evaluates the script with `vars` (question values and data source collections; names
    /// compared case-insensitively, as PowerShell does) and returns the `StaticThreshold` calls it
    /// made, in order.
    pub fn evaluate(
        &self,
        vars: &HashMap<String, ScriptValue>,
    ) -> Result<Vec<StaticThreshold>, ScriptError> {
        Ok(eval::run(&self.body, vars, &[])?.calls)
    }

    /// Evaluates threshold code for one time slice, as PAL runs code that loops over its
    /// `Quantized*` arrays: each of `collections` an array of its counter instances in the slice,
    /// `$alQuantizedTime` an array of one time (the slice, index 0). Returns the `CreateAlert`
    /// calls it made, in order.
    pub fn create_alerts(
        &self,
        vars: &HashMap<String, ScriptValue>,
        collections: &[(String, Vec<CounterInstance>)],
    ) -> Result<Vec<CodeAlert>, ScriptError> {
        Ok(eval::run(&self.body, vars, collections)?.alerts)
    }

    /// Evaluates a generated data source's code for one time slice, as PAL runs it: `vars` (the
    /// questions), each of `collections` an array of its counter instances in the slice, and the
    /// hash table the code fills in the variable `output` (its `COLLECTIONVARNAME`) read back:
    /// each key (the generated counter's path) with its numbers for the slice, in the order
    /// added. Values that are not numbers are left out; a key whose value is not an array is
    /// one value.
    pub fn generate(
        &self,
        vars: &HashMap<String, ScriptValue>,
        collections: &[(String, Vec<CounterInstance>)],
        output: &str,
    ) -> Result<Vec<(String, Vec<f64>)>, ScriptError> {
        let out = eval::run(&self.body, vars, collections)?;
        let Some(v) = out.vars.get(&output.to_ascii_lowercase()) else {
            return Err(ScriptError::Eval {
                line: 1,
                what: format!("the code does not set ${output}"),
            });
        };
        let Some(entries) = eval::entries(v) else {
            return Err(ScriptError::Eval {
                line: 1,
                what: format!("${output} is not a hash table of counter paths and values"),
            });
        };
        Ok(entries
            .into_iter()
            .map(|(k, v)| {
                let values = eval::elements(&v)
                    .iter()
                    .filter_map(eval::number_of)
                    .filter(|n| n.is_finite())
                    .collect();
                (k, values)
            })
            .collect())
    }
}

/// Parses and evaluates `code` in one step (see [`Script::parse`] and [`Script::evaluate`]).
pub fn evaluate(
    code: &str,
    vars: &HashMap<String, ScriptValue>,
) -> Result<Vec<StaticThreshold>, ScriptError> {
    Script::parse(code)?.evaluate(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, ScriptValue)]) -> HashMap<String, ScriptValue> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn coll(name: &str, count: usize) -> ScriptValue {
        ScriptValue::Collection {
            name: name.into(),
            count,
        }
    }

    #[test]
    fn arithmetic_casts_and_suffixes() {
        let code = "$a = $([Int] $P * 1024) * 0.10\n$b = 2GB + 1KB - 1MB / 1024\n\
                    StaticThreshold -CollectionOfCounterInstances $C -Operator 'lt' -Threshold $a\n\
                    StaticThreshold -CollectionOfCounterInstances $C -Operator 'GT' -Threshold $b -IsTrendOnly $True";
        let v = vars(&[("P", ScriptValue::Str("16".into())), ("C", coll("C", 1))]);
        let calls = evaluate(code, &v).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].threshold, 16.0 * 1024.0 * 0.10);
        assert_eq!(calls[0].operator, Operator::Lt);
        assert!(!calls[0].trend_only);
        assert_eq!(calls[1].threshold, 2147483648.0 + 1024.0 - 1024.0);
        assert_eq!(calls[1].operator, Operator::Gt);
        assert!(calls[1].trend_only);
    }

    #[test]
    fn int_rounds_half_to_even_and_overflows() {
        let v = vars(&[("C", coll("C", 1))]);
        let t = |e: &str| {
            evaluate(
                &format!("StaticThreshold -CollectionOfCounterInstances $C -Operator gt -Threshold $({e})"),
                &v,
            )
        };
        assert_eq!(t("[Int] 2.5").unwrap()[0].threshold, 2.0);
        assert_eq!(t("[Int] 3.5").unwrap()[0].threshold, 4.0);
        assert_eq!(t("[Math]::Round(1.25, 1)").unwrap()[0].threshold, 1.2);
        assert_eq!(t("[Math]::Round(1.35, 1)").unwrap()[0].threshold, 1.4);
        assert!(matches!(
            t("[Int] 4GB"),
            Err(ScriptError::Eval { line: 1, .. })
        ));
        assert!(
            matches!(t("1 / 0"), Err(ScriptError::Eval { line: 1, ref what }) if what == "division by zero")
        );
    }

    #[test]
    fn if_elseif_else_and_switch() {
        let code = "$OS = [string] $OS.ToUpper()\nswitch ($OS)\n{\n 'WINDOWS XP 32-BIT' { $m = 1 }\n 'WINDOWS SERVER' { $m = 2 }\n default { $m = 3 }\n}\n\
                    If ($m -eq 1) { $t = 10 }\nElseIf ($m -eq 2 -and $X -gt 1) { $t = 20 }\nElse { $t = 30 }\n\
                    switch ($($N)) { 1 {$u = 5} 2 {$u = 6} default {$u = 7} }\n\
                    StaticThreshold -CollectionOfCounterInstances $C -Operator 'ge' -Threshold ($t + $u)";
        let run = |os: &str, x: f64, n: f64| {
            let v = vars(&[
                ("OS", ScriptValue::Str(os.into())),
                ("X", ScriptValue::Number(x)),
                ("N", ScriptValue::Number(n)),
                ("C", coll("C", 2)),
            ]);
            evaluate(code, &v).unwrap()[0].threshold
        };
        assert_eq!(run("Windows XP 32-bit", 0.0, 1.0), 15.0);
        assert_eq!(run("Windows Server", 2.0, 2.0), 26.0);
        assert_eq!(run("Windows Server", 0.0, 9.0), 37.0);
        assert_eq!(run("Windows 10 64-bit", 5.0, 2.0), 36.0);
    }

    #[test]
    fn collection_count() {
        let code = "[Int] $n = $P.Count - 1\nIf ($n -eq 0)\n{\n $n = 1\n}\nStaticThreshold -CollectionOfCounterInstances $Q -Operator 'gt' -Threshold ($n * 2)";
        for (count, want) in [(1, 2.0), (2, 2.0), (5, 8.0)] {
            let v = vars(&[("P", coll("P", count)), ("Q", coll("Q", 1))]);
            let calls = evaluate(code, &v).unwrap();
            assert_eq!(calls[0].threshold, want);
            assert_eq!(calls[0].collection, "Q");
        }
    }

    #[test]
    fn unsupported_constructs_name_the_line() {
        let v = vars(&[("C", coll("C", 1))]);
        let e = evaluate("$a = 1\nDo { $a++ } While ($a -lt 3)", &v).unwrap_err();
        assert_eq!(e.to_string(), "line 2: the loop `Do` is not evaluated");
        let e = evaluate("\n\nCreateAlert -TimeSliceIndex 1", &v).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 3: the command `CreateAlert` is not evaluated"
        );
        let e = evaluate("$x = $global:oPal.QuantizedTime", &v).unwrap_err();
        assert_eq!(e.line(), Some(1));
        let e = evaluate("$x = Get-Date", &v).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1: the command `Get-Date` is not evaluated"
        );
        let e = evaluate("$x = 'a'\n$y = \"$($z)\"", &v).unwrap_err();
        assert_eq!(e.to_string(), "line 2: the variable $z is not defined");
        assert!(matches!(
            evaluate("$x = $undefined + 1", &v),
            Err(ScriptError::Eval { .. })
        ));
        assert!(matches!(
            evaluate("If ($x", &v),
            Err(ScriptError::Syntax { .. })
        ));
        assert!(matches!(
            evaluate("$x = 'abc", &v),
            Err(ScriptError::Syntax { .. })
        ));
    }

    #[test]
    fn bounds() {
        let v = HashMap::new();
        let deep = format!("$x = {}1{}", "(".repeat(100), ")".repeat(100));
        assert!(matches!(evaluate(&deep, &v), Err(ScriptError::Limit(_))));
        let deep_if = "If (1) {".repeat(100);
        assert!(matches!(evaluate(&deep_if, &v), Err(ScriptError::Limit(_))));
        let many = "$x = 1\n".repeat(MAX_STATEMENTS + 1);
        assert!(matches!(evaluate(&many, &v), Err(ScriptError::Limit(_))));
        let long = "#".repeat(MAX_CODE_BYTES + 1);
        assert!(matches!(evaluate(&long, &v), Err(ScriptError::Limit(_))));
    }
}
