//! PAL threshold files: `QUESTION`s, `ANALYSIS` elements with their data sources, thresholds and
//! descriptions, and `INHERITANCE`.
//!
//! The files are untrusted: the XML is read by `roxmltree` with DTDs refused and the node count
//! bounded, the code of thresholds is only kept as text (see [`super::script`] for how it is read),
//! and inheritance is followed to a bounded depth with cycles refused. A problem in the file is a
//! [`RulesError`] naming the file and the line and column; a problem inside one analysis (an
//! unknown element, a data source this crate cannot match) is kept in that analysis as the reason
//! it is not evaluated.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::path::{eq_ignore_case, CounterPath};
use crate::suggest::{suggest, DidYouMean};

use super::builtin::{builtin_rules, without_xml, BuiltinRules, BUILTIN_RULES};

/// The largest threshold file read, in bytes.
pub const MAX_RULES_BYTES: u64 = 16 * 1024 * 1024;
/// The most XML nodes one file may have.
pub const MAX_NODES: u32 = 500_000;
/// The deepest chain of `INHERITANCE` followed.
pub const MAX_INHERITANCE_DEPTH: usize = 16;

/// A problem with a threshold file as a whole.
///
/// A file that cannot be read displays as `file: cannot open` (or what else failed), and its
/// [`source`](std::error::Error::source) is the [`io::Error`](std::io::Error).
#[derive(Debug)]
#[non_exhaustive]
pub struct RulesError {
    /// The file (its path, or `built-in` for the embedded default).
    pub file: String,
    /// 1-based line and column, when the problem is at one place.
    pub position: Option<(u32, u32)>,
    /// What is wrong (what failed, when an I/O error is the cause).
    pub message: String,
    /// The I/O error, when reading a file failed.
    io: Option<std::io::Error>,
}

impl RulesError {
    fn new(file: &str, position: Option<(u32, u32)>, message: impl Into<String>) -> Self {
        RulesError {
            file: file.to_owned(),
            position,
            message: message.into(),
            io: None,
        }
    }

    /// Reading `file` failed: `what` says what could not be done, `e` is the cause.
    fn io(file: &str, what: impl Into<String>, e: std::io::Error) -> Self {
        RulesError {
            io: Some(e),
            ..RulesError::new(file, None, what)
        }
    }
}

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, col)) => write!(f, "{}:{line}:{col}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for RulesError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.io
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// A `QUESTION`: a variable the thresholds read, with its default value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    /// `QUESTIONVARNAME`.
    pub name: String,
    /// `DATATYPE` (`options`, `string`, `boolean`, `integer` …).
    pub data_type: String,
    /// `DEFAULTVALUE`.
    pub default: String,
    /// `OPTIONS`, for `DATATYPE="options"`.
    pub options: Vec<String>,
    /// The question's text.
    pub text: String,
}

/// What a data source is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataSourceKind {
    /// `TYPE="CounterLog"`: the log's columns that the path selects.
    CounterLog,
    /// `TYPE="Generated"`: values PAL computes with PowerShell from other data sources.
    Generated {
        /// The PowerShell code (kept as text, never run).
        code: String,
    },
}

/// A `DATASOURCE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataSource {
    /// Counter log or generated.
    pub kind: DataSourceKind,
    /// `NAME`.
    pub name: String,
    /// `EXPRESSIONPATH`, the counter path with wildcards.
    pub expression_path: String,
    /// `EXPRESSIONPATH` parsed, or why it does not parse.
    pub path: Result<CounterPath, String>,
    /// `COLLECTIONVARNAME`, the variable the thresholds name it by.
    pub collection_var: String,
    /// `EXCLUDE INSTANCE=…`: instance names left out (compared case-insensitively).
    pub excludes: Vec<String>,
    /// The path by regular expression, when the data source asks for it
    /// (`ISCOUNTEROBJECTREGULAREXPRESSION="True"`, or the same of the counter or the instance, with
    /// `REGULAREXPRESSIONCOUNTERPATH`).
    pub regex: Option<RegexPath>,
}

/// A data source's `REGULAREXPRESSIONCOUNTERPATH` (`\(MSSQL|SQLServer).*:Buffer Manager\Page life
/// expectancy`), split as PAL splits it: the counter after the last `\`, the instance in the
/// parentheses that close the object part, the object before them. Each part flagged as an
/// expression matches a whole name of the log, ignoring case; the others compare as names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegexPath {
    /// `REGULAREXPRESSIONCOUNTERPATH` as written.
    pub text: String,
    /// The object part (an expression when `object_regex`).
    pub object: String,
    /// The instance part, when the path has one (`*` or none: every instance).
    pub instance: Option<String>,
    /// The counter part (an expression when `counter_regex`).
    pub counter: String,
    /// `ISCOUNTEROBJECTREGULAREXPRESSION="True"`.
    pub object_regex: bool,
    /// `ISCOUNTERNAMEREGULAREXPRESSION="True"`.
    pub counter_regex: bool,
    /// `ISCOUNTERINSTANCEREGULAREXPRESSION="True"`.
    pub instance_regex: bool,
}

impl RegexPath {
    /// Splits `text` as PAL's `GetCounterObject`, `GetCounterInstance` and `GetCounterName` do: the
    /// counter is what follows the last `\`; before it, a leading `\\machine` and `\` are dropped,
    /// and a trailing parenthesized group (parentheses balanced from the end) is the instance.
    pub fn split(
        text: &str,
        object_regex: bool,
        counter_regex: bool,
        instance_regex: bool,
    ) -> Self {
        let (head, counter) = text.rsplit_once('\\').unwrap_or(("", text));
        let mut head = head;
        if let Some(rest) = head.strip_prefix("\\\\") {
            head = rest
                .find('\\')
                .map_or("", |i| rest.get(i..).unwrap_or_default());
        }
        let head = head.strip_prefix('\\').unwrap_or(head);
        let (object, instance) = split_instance(head);
        RegexPath {
            text: text.to_owned(),
            object: object.to_owned(),
            instance: instance.map(str::to_owned),
            counter: counter.to_owned(),
            object_regex,
            counter_regex,
            instance_regex,
        }
    }
}

/// `Locks(_Total)` → (`Locks`, `_Total`); the instance is the group of balanced parentheses that
/// ends the text, as PAL finds it.
fn split_instance(head: &str) -> (&str, Option<&str>) {
    if !head.ends_with(')') {
        return (head, None);
    }
    let mut depth = 0usize;
    for (i, c) in head.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let inner = head.get(i + 1..head.len() - 1).unwrap_or_default();
                    return (head.get(..i).unwrap_or_default(), Some(inner));
                }
            }
            _ => {}
        }
    }
    (head, None)
}

/// A `THRESHOLD`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Threshold {
    /// `NAME`.
    pub name: String,
    /// `CONDITION` (`Warning`, `Critical` …).
    pub condition: String,
    /// `PRIORITY` (50 for warnings, 100 for critical alerts in PAL's files).
    pub priority: i32,
    /// The PowerShell code.
    pub code: String,
    /// The line in the file where the code starts.
    pub code_line: u32,
}

/// An `ANALYSIS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// `NAME`.
    pub name: String,
    /// `ID` (a GUID in PAL's files; may be empty).
    pub id: String,
    /// `ENABLED`.
    pub enabled: bool,
    /// `CATEGORY`.
    pub category: String,
    /// `PRIMARYDATASOURCE`.
    pub primary_data_source: String,
    /// The data sources.
    pub data_sources: Vec<DataSource>,
    /// The thresholds.
    pub thresholds: Vec<Threshold>,
    /// `DESCRIPTION`: HTML from the file, untrusted (sanitize before showing it).
    pub description: String,
    /// The file the analysis comes from.
    pub file: String,
    /// Why the analysis cannot be evaluated whatever the log, when the file says something this
    /// crate does not read (an unknown element …).
    pub problem: Option<String>,
}

/// Threshold files read, inheritance resolved.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    /// `NAME` of the top file.
    pub name: String,
    /// The files read, the top one first.
    pub files: Vec<String>,
    /// The questions of all files (the inheriting file's first, one per name).
    pub questions: Vec<Question>,
    /// The analyses of all files: the top file's, then each inherited file's that the files before
    /// did not define (same `ID`, or the same `NAME` when there is no ID).
    pub analyses: Vec<Analysis>,
}

/// Where each line of a document starts, to turn byte offsets into 1-based lines and columns (in
/// characters, as `roxmltree` counts them) without scanning the text from its start each time.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
            .collect();
        Lines { text, starts }
    }

    /// The line and column of byte offset `at`.
    fn at(&self, at: usize) -> (u32, u32) {
        let line = self.starts.partition_point(|&s| s <= at).max(1);
        let start = self.starts.get(line - 1).copied().unwrap_or(0);
        let col = self.text.get(start..at).map_or(0, |t| t.chars().count()) + 1;
        (
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(col).unwrap_or(u32::MAX),
        )
    }

    /// The line and column where `node` starts.
    fn of(&self, node: roxmltree::Node<'_, '_>) -> (u32, u32) {
        self.at(node.range().start)
    }
}

fn attr(node: roxmltree::Node<'_, '_>, name: &str) -> String {
    node.attributes()
        .find(|a| a.name().eq_ignore_ascii_case(name))
        .map(|a| a.value().to_owned())
        .unwrap_or_default()
}

fn is_true(s: &str) -> bool {
    s.trim().eq_ignore_ascii_case("true")
}

fn text_of(node: roxmltree::Node<'_, '_>) -> String {
    node.children()
        .filter(|c| c.is_text())
        .filter_map(|c| c.text())
        .collect()
}

/// Decodes the bytes of a threshold file: UTF-8 (with or without byte-order mark) or UTF-16 with
/// a byte-order mark, as PAL's editor saves them.
fn decode(file: &str, bytes: &[u8]) -> Result<String, RulesError> {
    let (text, bad) = match encoding_rs::Encoding::for_bom(bytes) {
        Some((enc, bom)) => enc.decode_without_bom_handling(bytes.get(bom..).unwrap_or_default()),
        None => encoding_rs::UTF_8.decode_without_bom_handling(bytes),
    };
    if bad {
        return Err(RulesError::new(
            file,
            None,
            "the file is not valid UTF-8 or UTF-16 text",
        ));
    }
    Ok(text.into_owned())
}

/// One threshold file, without its inheritance: the file's analyses and questions, and the
/// `INHERITANCE FILEPATH`s it names.
#[derive(Clone, Debug, Default)]
pub struct RulesFile {
    /// `NAME` of the `PAL` element.
    pub name: String,
    /// The questions.
    pub questions: Vec<Question>,
    /// The analyses.
    pub analyses: Vec<Analysis>,
    /// The non-empty `INHERITANCE FILEPATH`s, as written.
    pub inherits: Vec<String>,
}

impl RulesFile {
    /// Reads the text of one threshold file; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<RulesFile, RulesError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let opts = roxmltree::ParsingOptions {
            allow_dtd: false,
            nodes_limit: MAX_NODES,
            ..Default::default()
        };
        let doc = roxmltree::Document::parse_with_options(text, opts).map_err(|e| {
            let p = e.pos();
            RulesError::new(file, Some((p.row, p.col)), format!("malformed XML: {e}"))
        })?;
        let lines = Lines::new(text);
        let root = doc.root_element();
        if !root.tag_name().name().eq_ignore_ascii_case("PAL") {
            return Err(RulesError::new(
                file,
                Some(lines.of(root)),
                format!(
                    "the root element is <{}>, not <PAL>: not a PAL threshold file",
                    root.tag_name().name()
                ),
            ));
        }
        let mut out = RulesFile {
            name: attr(root, "NAME"),
            ..Default::default()
        };
        for node in root.children().filter(|n| n.is_element()) {
            match node.tag_name().name().to_ascii_uppercase().as_str() {
                "QUESTION" => out.questions.push(Question {
                    name: attr(node, "QUESTIONVARNAME"),
                    data_type: attr(node, "DATATYPE"),
                    default: attr(node, "DEFAULTVALUE"),
                    options: attr(node, "OPTIONS")
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .collect(),
                    text: text_of(node)
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                }),
                "INHERITANCE" => {
                    let f = attr(node, "FILEPATH");
                    if !f.trim().is_empty() {
                        out.inherits.push(f.trim().to_owned());
                    }
                }
                "ANALYSIS" => out.analyses.push(analysis(&lines, node, file)),
                other => {
                    return Err(RulesError::new(
                        file,
                        Some(lines.of(node)),
                        format!("unknown element <{other}> in <PAL>"),
                    ))
                }
            }
        }
        for q in &out.questions {
            if q.name.is_empty() {
                return Err(RulesError::new(
                    file,
                    None,
                    "a QUESTION without QUESTIONVARNAME",
                ));
            }
        }
        Ok(out)
    }
}

/// Reports a problem inside an analysis: the node it is at and what it is.
type Problem<'p> = dyn FnMut(roxmltree::Node<'_, '_>, String) + 'p;

/// The `EXCLUDE INSTANCE`s and the `CODE` inside a data source element; any other child element is
/// a problem.
fn data_source_children(
    node: roxmltree::Node<'_, '_>,
    problem: &mut Problem<'_>,
) -> (Vec<String>, String) {
    let mut excludes = Vec::new();
    let mut code = String::new();
    for c in node.children().filter(|n| n.is_element()) {
        match c.tag_name().name().to_ascii_uppercase().as_str() {
            "EXCLUDE" => excludes.push(attr(c, "INSTANCE")),
            "CODE" => code = text_of(c),
            other => problem(
                c,
                format!(
                    "unknown element <{other}> in <{}>",
                    node.tag_name().name().to_ascii_uppercase()
                ),
            ),
        }
    }
    (excludes, code)
}

/// A `DATASOURCE`: a counter-log or generated data source (`None`, with a problem, for another
/// `TYPE`).
fn data_source(node: roxmltree::Node<'_, '_>, problem: &mut Problem<'_>) -> Option<DataSource> {
    let kind = attr(node, "TYPE");
    let expression_path = attr(node, "EXPRESSIONPATH");
    let (excludes, code) = data_source_children(node, problem);
    let kind = if kind.eq_ignore_ascii_case("CounterLog") {
        DataSourceKind::CounterLog
    } else if kind.eq_ignore_ascii_case("Generated") {
        DataSourceKind::Generated { code }
    } else {
        problem(
            node,
            format!("the data source TYPE \"{kind}\" is not CounterLog or Generated"),
        );
        return None;
    };
    let [object, counter, instance] = [
        "ISCOUNTEROBJECTREGULAREXPRESSION",
        "ISCOUNTERNAMEREGULAREXPRESSION",
        "ISCOUNTERINSTANCEREGULAREXPRESSION",
    ]
    .map(|k| is_true(&attr(node, k)));
    let regex = (object || counter || instance).then(|| {
        let text = attr(node, "REGULAREXPRESSIONCOUNTERPATH");
        // Without an expression path of its own, the data source's path is the expression.
        let text = if text.trim().is_empty() {
            expression_path.clone()
        } else {
            text
        };
        RegexPath::split(&text, object, counter, instance)
    });
    Some(DataSource {
        kind,
        name: attr(node, "NAME"),
        path: CounterPath::parse(&expression_path).map_err(|e| e.to_string()),
        expression_path,
        collection_var: attr(node, "COLLECTIONVARNAME"),
        excludes,
        regex,
    })
}

/// A `<COUNTER NAME=… MINVARNAME=… …>` inside an `ANALYSIS`, the form of PAL's first threshold
/// files: a counter-log data source whose path is `NAME`. It names no collection variable; it gets
/// the one PAL 2 gives the data sources it makes from counter paths (`CollectionOf` and the path's
/// object, counter and instance, or `ALL` for `*`, with `/ . : ( ) -` and spaces dropped and `%`
/// spelled `Percent`; PAL's `ConvertCounterExpressionToVarName`).
fn counter_element(node: roxmltree::Node<'_, '_>, problem: &mut Problem<'_>) -> DataSource {
    let expression_path = attr(node, "NAME");
    let (excludes, _) = data_source_children(node, problem);
    let path = CounterPath::parse(&expression_path).map_err(|e| e.to_string());
    let collection_var = match &path {
        Ok(p) => collection_var_of(p),
        Err(_) => String::new(),
    };
    DataSource {
        kind: DataSourceKind::CounterLog,
        name: expression_path.clone(),
        path,
        expression_path,
        collection_var,
        excludes,
        regex: None,
    }
}

/// PAL's variable name of a counter path's collection (see [`counter_element`]).
fn collection_var_of(p: &CounterPath) -> String {
    let instance = match (&p.parent, &p.instance) {
        (_, Some(i)) if i == "*" => "ALL".to_owned(),
        (Some(parent), Some(i)) => format!("{parent}/{i}"),
        (None, Some(i)) => i.clone(),
        (_, None) => String::new(),
    };
    let mut out = String::from("CollectionOf");
    for c in format!("{}{}{instance}", p.object, p.counter).chars() {
        match c {
            '/' | '.' | ' ' | ':' | '(' | ')' | '-' => {}
            '%' => out.push_str("Percent"),
            c => out.push(c),
        }
    }
    out
}

fn analysis(lines: &Lines<'_>, node: roxmltree::Node<'_, '_>, file: &str) -> Analysis {
    let mut a = Analysis {
        name: attr(node, "NAME"),
        id: attr(node, "ID"),
        enabled: is_true(&attr(node, "ENABLED")),
        category: attr(node, "CATEGORY"),
        primary_data_source: attr(node, "PRIMARYDATASOURCE"),
        data_sources: Vec::new(),
        thresholds: Vec::new(),
        description: String::new(),
        file: file.to_owned(),
        problem: None,
    };
    let problem = |a: &mut Analysis, n: roxmltree::Node<'_, '_>, what: String| {
        if a.problem.is_none() {
            let (line, col) = lines.of(n);
            a.problem = Some(format!("{file}:{line}:{col}: {what}"));
        }
    };
    let mut first_form = false;
    for child in node.children().filter(|n| n.is_element()) {
        match child.tag_name().name().to_ascii_uppercase().as_str() {
            "DATASOURCE" => {
                if let Some(ds) = data_source(child, &mut |n, what| problem(&mut a, n, what)) {
                    a.data_sources.push(ds);
                }
            }
            "COUNTER" => {
                let ds = counter_element(child, &mut |n, what| problem(&mut a, n, what));
                a.data_sources.push(ds);
                first_form = true;
            }
            "THRESHOLD" => {
                let code_node = child
                    .children()
                    .find(|n| n.is_element() && n.tag_name().name().eq_ignore_ascii_case("CODE"));
                let (code, code_line) = match code_node {
                    Some(c) => {
                        // The code's first line is the line of its first text node.
                        let start = c.first_child().map_or(c.range().start, |t| t.range().start);
                        (text_of(c), lines.at(start).0)
                    }
                    None => (String::new(), lines.of(child).0),
                };
                let priority = attr(child, "PRIORITY");
                a.thresholds.push(Threshold {
                    name: attr(child, "NAME"),
                    condition: attr(child, "CONDITION"),
                    priority: priority.trim().parse().unwrap_or(0),
                    code,
                    code_line,
                });
            }
            "DESCRIPTION" => a.description = text_of(child),
            "CHART" => {}
            other => problem(
                &mut a,
                child,
                format!("unknown element <{other}> in <ANALYSIS>"),
            ),
        }
    }
    if first_form && a.problem.is_none() {
        a.problem = visual_basic_code(&a);
    }
    a
}

/// In an analysis of PAL's first form (`<COUNTER>`), the first threshold whose code is Visual
/// Basic (a line `End If`), as the reason the analysis is not evaluated: PAL 1 ran that code over
/// the whole log's minimum, average and maximum; PAL 2, which reads these files, does not run it.
fn visual_basic_code(a: &Analysis) -> Option<String> {
    let t = a.thresholds.iter().find(|t| {
        t.code.lines().any(|l| {
            let mut words = l.split_whitespace();
            matches!((words.next(), words.next()), (Some(e), Some(i))
                if e.eq_ignore_ascii_case("end") && i.eq_ignore_ascii_case("if"))
        })
    })?;
    Some(format!(
        "threshold \"{}\": {}:{}: Visual Basic code of PAL 1 (`If … Then … End If` over the whole \
         log's minimum, average and maximum), which PAL 2 does not run either",
        t.name, a.file, t.code_line
    ))
}

impl Rules {
    /// The built-in rules: PAL's `QuickSystemOverview.xml`.
    pub fn builtin() -> Rules {
        Rules::builtin_named("QuickSystemOverview.xml").unwrap_or_default()
    }

    /// The built-in threshold file named `name` (ignoring case, with or without `.xml`:
    /// `SQLServer2014`, `sqlserver2014.xml`) and the files it inherits, from the built-in set. An
    /// unknown name is an error offering the closest built-in names.
    pub fn builtin_named(name: &str) -> Result<Rules, RulesError> {
        let Some(b) = builtin_rules(name) else {
            return Err(unknown_builtin(name));
        };
        let mut rules = Rules::default();
        load_into(Origin::Builtin(b), &mut rules, &mut Vec::new(), None)?;
        Ok(rules)
    }

    /// Reads the threshold file at `path` and the files it inherits. An inherited file is found as
    /// PAL finds it on Windows, where names ignore case: the path as written, relative to the
    /// inheriting file's folder; else a file of that folder whose name is the same ignoring case;
    /// else the built-in file of that name ([`BUILTIN_RULES`]). A missing or malformed file, a cycle
    /// (the error names the chain), or inheritance deeper than [`MAX_INHERITANCE_DEPTH`] is an error.
    pub fn load(path: &Path) -> Result<Rules, RulesError> {
        let mut rules = Rules::default();
        let origin = Origin::File {
            shown: shown_path(path),
            path: path.to_path_buf(),
        };
        load_into(origin, &mut rules, &mut Vec::new(), None)?;
        Ok(rules)
    }

    /// The rules a user names: the file at `spec` when there is one, else the built-in file of that
    /// name ([`Rules::builtin_named`]). When neither exists, the error is the file's (it cannot be
    /// opened), with the closest built-in names offered when `spec` names no folder.
    pub fn open(spec: &str) -> Result<Rules, RulesError> {
        let path = Path::new(spec);
        if path.exists() || builtin_rules(spec).is_none() {
            return Rules::load(path).map_err(|e| {
                // A bare name (no folder) may have been meant as a built-in one.
                let bare = !spec.contains(['/', '\\']);
                let missing = std::error::Error::source(&e)
                    .and_then(|s| s.downcast_ref::<std::io::Error>())
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound);
                let close = builtin_suggestions(spec);
                if bare && missing && e.file == shown_path(path) && !close.is_empty() {
                    return RulesError::new(
                        &e.file,
                        None,
                        format!(
                            "cannot open: no such file, nor a built-in threshold file{}",
                            DidYouMean(&close)
                        ),
                    );
                }
                e
            });
        }
        Rules::builtin_named(spec)
    }

    /// Adds the analyses and questions of `other` that these rules do not have yet (several
    /// `--rules` files).
    pub fn extend(&mut self, other: Rules) {
        self.files.extend(other.files);
        merge_file(
            self,
            RulesFile {
                name: other.name,
                questions: other.questions,
                analyses: other.analyses,
                inherits: Vec::new(),
            },
        );
    }

    /// The analyses that are enabled, in order.
    pub fn enabled(&self) -> impl Iterator<Item = &Analysis> {
        self.analyses.iter().filter(|a| a.enabled)
    }
}

fn merge_file(rules: &mut Rules, file: RulesFile) {
    if rules.name.is_empty() {
        rules.name = file.name;
    }
    for q in file.questions {
        if !rules
            .questions
            .iter()
            .any(|r| r.name.eq_ignore_ascii_case(&q.name))
        {
            rules.questions.push(q);
        }
    }
    let mut seen: HashSet<String> = rules.analyses.iter().map(analysis_key).collect();
    for a in file.analyses {
        if seen.insert(analysis_key(&a)) {
            rules.analyses.push(a);
        }
    }
}

fn analysis_key(a: &Analysis) -> String {
    if a.id.trim().is_empty() {
        format!("name:{}", a.name.to_lowercase())
    } else {
        format!("id:{}", a.id.to_lowercase())
    }
}

/// The closest built-in file names to `name` (compared without `.xml`).
fn builtin_suggestions(name: &str) -> Vec<String> {
    suggest(
        without_xml(name),
        BUILTIN_RULES.iter().map(|b| without_xml(b.file)),
    )
}

fn unknown_builtin(name: &str) -> RulesError {
    RulesError::new(
        name,
        None,
        format!(
            "not a built-in threshold file (`perfcounters analyze --list-rules` lists them){}",
            DidYouMean(&builtin_suggestions(name))
        ),
    )
}

/// Where a threshold file comes from.
enum Origin {
    /// A file on disk: its path as given (joined to the inheriting file's folder), and as shown.
    File { path: PathBuf, shown: String },
    /// A built-in file.
    Builtin(&'static BuiltinRules),
}

impl Origin {
    fn shown(&self) -> String {
        match self {
            Origin::File { shown, .. } => shown.clone(),
            Origin::Builtin(b) => format!("built-in {}", b.file),
        }
    }
}

/// The file `inherited` names, as an inheriting file at `from` finds it: see [`Rules::load`].
/// `from_shown` names the inheriting file in errors.
fn resolve_inherited(
    from: &Origin,
    dir: Option<&Path>,
    inherited: &str,
    from_shown: &str,
) -> Result<Origin, RulesError> {
    // PAL writes Windows paths; a relative one is relative to the inheriting file.
    let rel = inherited.replace('\\', "/");
    let file_name = rel.rsplit('/').next().unwrap_or(&rel).to_owned();
    let builtin = || builtin_rules(&file_name).filter(|b| b.file.eq_ignore_ascii_case(&file_name));
    let Some(dir) = dir else {
        // A built-in file inherits built-in files.
        return builtin().map(Origin::Builtin).ok_or_else(|| {
            RulesError::new(
                &from.shown(),
                None,
                format!("the inherited file {inherited} is not a built-in threshold file"),
            )
        });
    };
    let path = dir.join(&rel);
    let shown = shown_path(&path);
    if path.is_file() {
        return Ok(Origin::File { path, shown });
    }
    // The same name in another case, in that folder (the first in name order when several).
    let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
    if let Ok(entries) = std::fs::read_dir(&folder) {
        let mut same: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| eq_ignore_case(n, &file_name))
            })
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        same.sort();
        if let Some(p) = same.into_iter().next() {
            return Ok(Origin::File {
                shown: shown_path(&p),
                path: p,
            });
        }
    }
    if let Some(b) = builtin() {
        return Ok(Origin::Builtin(b));
    }
    let e = std::fs::metadata(&path)
        .err()
        .unwrap_or_else(|| std::io::ErrorKind::NotFound.into());
    Err(RulesError::io(
        from_shown,
        format!("the inherited file {shown} cannot be opened"),
        e,
    ))
}

/// `path` as people write it: without the `\\?\` prefix that `canonicalize` puts before the paths of
/// inherited files on Windows (their folder is the inheriting file's canonical one).
fn shown_path(path: &Path) -> String {
    let text = path.display().to_string();
    match text.strip_prefix(r"\\?\") {
        Some(rest) => match rest.strip_prefix(r"UNC\") {
            Some(share) => format!(r"\\{share}"),
            None => rest.to_owned(),
        },
        None => text,
    }
}

/// A built-in file read, each once per process (a file and the ones it inherits are read again
/// by every file that inherits them).
pub(super) fn parsed_builtin(b: &'static BuiltinRules) -> Result<RulesFile, RulesError> {
    static PARSED: OnceLock<Vec<OnceLock<RulesFile>>> = OnceLock::new();
    let shown = format!("built-in {}", b.file);
    let slots = PARSED.get_or_init(|| BUILTIN_RULES.iter().map(|_| OnceLock::new()).collect());
    let Some(slot) = BUILTIN_RULES
        .iter()
        .position(|x| x.file == b.file)
        .and_then(|i| slots.get(i))
    else {
        return RulesFile::parse(&shown, b.text);
    };
    if let Some(f) = slot.get() {
        return Ok(f.clone());
    }
    let f = RulesFile::parse(&shown, b.text)?;
    Ok(slot.get_or_init(|| f).clone())
}

/// The text of a file on disk, bounded by [`MAX_RULES_BYTES`].
fn read_rules_file(canonical: &Path, shown: &str) -> Result<String, RulesError> {
    let meta = std::fs::metadata(canonical).map_err(|e| RulesError::io(shown, "cannot open", e))?;
    if meta.len() > MAX_RULES_BYTES {
        return Err(RulesError::new(
            shown,
            None,
            format!(
                "{} bytes: larger than the {MAX_RULES_BYTES} bytes a threshold file may have",
                meta.len()
            ),
        ));
    }
    let bytes = std::fs::read(canonical).map_err(|e| RulesError::io(shown, "cannot read", e))?;
    decode(shown, &bytes)
}

/// Reads the file `origin` and, depth first, the files it inherits into `rules`; `stack` holds
/// the files being read (a key that tells files apart, and the name shown), `from` the inheriting
/// file's name.
fn load_into(
    origin: Origin,
    rules: &mut Rules,
    stack: &mut Vec<(String, String)>,
    from: Option<&str>,
) -> Result<(), RulesError> {
    let shown = origin.shown();
    let (key, dir) = match &origin {
        Origin::File { path, .. } => {
            let canonical = std::fs::canonicalize(path).map_err(|e| match from {
                Some(f) => {
                    RulesError::io(f, format!("the inherited file {shown} cannot be opened"), e)
                }
                None => RulesError::io(&shown, "cannot open", e),
            })?;
            let dir = canonical
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            let key = format!("file:{}", canonical.display());
            (key, Some((canonical, dir)))
        }
        Origin::Builtin(b) => (format!("built-in:{}", b.file.to_ascii_lowercase()), None),
    };
    if let Some(at) = stack.iter().position(|(k, _)| *k == key) {
        let mut chain: Vec<&str> = stack
            .get(at..)
            .unwrap_or_default()
            .iter()
            .map(|(_, s)| s.as_str())
            .collect();
        chain.push(&shown);
        return Err(RulesError::new(
            from.unwrap_or(&shown),
            None,
            format!("inheritance cycle: {}", chain.join(" inherits ")),
        ));
    }
    if stack.len() >= MAX_INHERITANCE_DEPTH {
        return Err(RulesError::new(
            &shown,
            None,
            format!("inheritance deeper than {MAX_INHERITANCE_DEPTH} files"),
        ));
    }
    let file = match (&origin, &dir) {
        (Origin::Builtin(b), _) => parsed_builtin(b)?,
        (_, Some((canonical, _))) => {
            RulesFile::parse(&shown, &read_rules_file(canonical, &shown)?)?
        }
        (_, None) => return Err(RulesError::new(&shown, None, "cannot open")),
    };
    let inherits = file.inherits.clone();
    rules.files.push(shown.clone());
    merge_file(rules, file);
    stack.push((key, shown.clone()));
    for inherited in inherits {
        let next = resolve_inherited(
            &origin,
            dir.as_ref().map(|(_, d)| d.as_path()),
            &inherited,
            &shown,
        )?;
        load_into(next, rules, stack, Some(&shown))?;
    }
    stack.pop();
    Ok(())
}
