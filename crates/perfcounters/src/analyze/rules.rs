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

use crate::path::CounterPath;

/// The threshold file built in: PAL's `QuickSystemOverview.xml` (MIT, see `pal/LICENSE`).
pub const QUICK_SYSTEM_OVERVIEW: &str = include_str!("pal/QuickSystemOverview.xml");
/// PAL's licence, shipped with the built-in threshold file.
pub const PAL_LICENSE: &str = include_str!("pal/LICENSE");

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
    /// Set when the data source asks for regular-expression matching
    /// (`ISCOUNTER…REGULAREXPRESSION="True"`), which is not evaluated.
    pub regex: bool,
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

fn pos(doc: &roxmltree::Document<'_>, node: roxmltree::Node<'_, '_>) -> (u32, u32) {
    let p = doc.text_pos_at(node.range().start);
    (p.row, p.col)
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
        let root = doc.root_element();
        if !root.tag_name().name().eq_ignore_ascii_case("PAL") {
            return Err(RulesError::new(
                file,
                Some(pos(&doc, root)),
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
                "ANALYSIS" => out.analyses.push(analysis(&doc, node, file)),
                other => {
                    return Err(RulesError::new(
                        file,
                        Some(pos(&doc, node)),
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

fn analysis(doc: &roxmltree::Document<'_>, node: roxmltree::Node<'_, '_>, file: &str) -> Analysis {
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
            let (line, col) = pos(doc, n);
            a.problem = Some(format!("{file}:{line}:{col}: {what}"));
        }
    };
    for child in node.children().filter(|n| n.is_element()) {
        match child.tag_name().name().to_ascii_uppercase().as_str() {
            "DATASOURCE" => {
                let kind = attr(child, "TYPE");
                let expression_path = attr(child, "EXPRESSIONPATH");
                let mut excludes = Vec::new();
                let mut code = String::new();
                for c in child.children().filter(|n| n.is_element()) {
                    match c.tag_name().name().to_ascii_uppercase().as_str() {
                        "EXCLUDE" => excludes.push(attr(c, "INSTANCE")),
                        "CODE" => code = text_of(c),
                        other => problem(
                            &mut a,
                            c,
                            format!("unknown element <{other}> in <DATASOURCE>"),
                        ),
                    }
                }
                let kind = if kind.eq_ignore_ascii_case("CounterLog") {
                    DataSourceKind::CounterLog
                } else if kind.eq_ignore_ascii_case("Generated") {
                    DataSourceKind::Generated { code }
                } else {
                    problem(
                        &mut a,
                        child,
                        format!("the data source TYPE \"{kind}\" is not CounterLog or Generated"),
                    );
                    continue;
                };
                let regex = [
                    "ISCOUNTEROBJECTREGULAREXPRESSION",
                    "ISCOUNTERNAMEREGULAREXPRESSION",
                    "ISCOUNTERINSTANCEREGULAREXPRESSION",
                ]
                .iter()
                .any(|k| is_true(&attr(child, k)));
                a.data_sources.push(DataSource {
                    kind,
                    name: attr(child, "NAME"),
                    path: CounterPath::parse(&expression_path).map_err(|e| e.to_string()),
                    expression_path,
                    collection_var: attr(child, "COLLECTIONVARNAME"),
                    excludes,
                    regex,
                });
            }
            "THRESHOLD" => {
                let code_node = child
                    .children()
                    .find(|n| n.is_element() && n.tag_name().name().eq_ignore_ascii_case("CODE"));
                let (code, code_line) = match code_node {
                    Some(c) => {
                        // The code's first line is the line of its first text node.
                        let start = c.first_child().map_or(c.range().start, |t| t.range().start);
                        (text_of(c), doc.text_pos_at(start).row)
                    }
                    None => (String::new(), pos(doc, child).0),
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
    a
}

impl Rules {
    /// The built-in rules: PAL's `QuickSystemOverview.xml`.
    pub fn builtin() -> Rules {
        let file = RulesFile::parse("built-in QuickSystemOverview.xml", QUICK_SYSTEM_OVERVIEW)
            .unwrap_or_default();
        Rules {
            name: file.name,
            files: vec!["built-in QuickSystemOverview.xml".into()],
            questions: file.questions,
            analyses: file.analyses,
        }
    }

    /// Reads the threshold file at `path` and the files it inherits (relative to the inheriting
    /// file's folder). A missing or malformed file, a cycle, or inheritance deeper than
    /// [`MAX_INHERITANCE_DEPTH`] is an error.
    pub fn load(path: &Path) -> Result<Rules, RulesError> {
        let mut rules = Rules::default();
        let mut stack = Vec::new();
        load_into(path, &mut rules, &mut stack, None)?;
        Ok(rules)
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

fn load_into(
    path: &Path,
    rules: &mut Rules,
    stack: &mut Vec<PathBuf>,
    from: Option<&str>,
) -> Result<(), RulesError> {
    let shown = shown_path(path);
    let canonical = std::fs::canonicalize(path).map_err(|e| match from {
        Some(f) => RulesError::io(f, format!("the inherited file {shown} cannot be opened"), e),
        None => RulesError::io(&shown, "cannot open", e),
    })?;
    if stack.contains(&canonical) {
        return Err(RulesError::new(
            from.unwrap_or(&shown),
            None,
            format!("inheritance cycle: {shown} inherits itself"),
        ));
    }
    if stack.len() >= MAX_INHERITANCE_DEPTH {
        return Err(RulesError::new(
            &shown,
            None,
            format!("inheritance deeper than {MAX_INHERITANCE_DEPTH} files"),
        ));
    }
    let meta =
        std::fs::metadata(&canonical).map_err(|e| RulesError::io(&shown, "cannot open", e))?;
    if meta.len() > MAX_RULES_BYTES {
        return Err(RulesError::new(
            &shown,
            None,
            format!(
                "{} bytes: larger than the {MAX_RULES_BYTES} bytes a threshold file may have",
                meta.len()
            ),
        ));
    }
    let bytes = std::fs::read(&canonical).map_err(|e| RulesError::io(&shown, "cannot read", e))?;
    let text = decode(&shown, &bytes)?;
    let file = RulesFile::parse(&shown, &text)?;
    let inherits = file.inherits.clone();
    rules.files.push(shown.clone());
    merge_file(rules, file);
    stack.push(canonical.clone());
    let dir = canonical
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    for inherited in inherits {
        // PAL writes Windows paths; a relative one is relative to the inheriting file.
        let rel = inherited.replace('\\', "/");
        load_into(&dir.join(rel), rules, stack, Some(&shown))?;
    }
    stack.pop();
    Ok(())
}
