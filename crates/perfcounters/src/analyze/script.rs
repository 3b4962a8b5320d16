//! The PowerShell subset of PAL threshold code, read and evaluated without ever running it.
//!
//! PAL evaluates a threshold's `CODE` with `Invoke-Expression`. This module reads the same text as
//! data: a small lexer and parser build a tree of the constructs the threshold files use, and an
//! interpreter walks it with a fixed budget. Supported:
//!
//! * assignments `$x = …`, optionally typed (`[Int] $x = …`);
//! * numbers with the `KB`/`MB`/`GB`/`TB`/`PB` suffixes, strings in single or double quotes (double
//!   quotes without `$` expansion), `$True`, `$False`, `$null`;
//! * arithmetic `+ - * / %`, unary minus, parentheses and subexpressions `$( … )`;
//! * the casts `[Int]`, `[Double]`, `[String]`, `[Math]::Round(x[, digits])`, `[Math]::Abs(x)`;
//! * comparisons `-eq -ne -lt -le -gt -ge` (strings case-insensitively, as PowerShell does),
//!   `-and`, `-or`, `-not`;
//! * `If / ElseIf / Else`, `switch (x) { label { … } default { … } }` on strings and numbers;
//! * `.ToUpper()`, `.ToLower()` on strings and `.Count` on a collection (the number of counter
//!   instances of a data source);
//! * the call `StaticThreshold -CollectionOfCounterInstances $X -Operator 'gt' -Threshold V
//!   [-IsTrendOnly $True]`, which the interpreter records instead of running.
//!
//! Anything else (loops, other commands, methods, .NET types, arrays, hash tables, string expansion)
//! is [`ScriptError::Unsupported`], naming the line; the caller lists the analysis as not evaluated.
//! The work is bounded: code length, nesting depth and statements executed are capped, and the code
//! has no loop, so evaluation ends. Numbers are `f64`; `[Int]` rounds half to even and must fit
//! `Int32`, as in PowerShell.
//!
//! One departure from PowerShell, on purpose: a string that reads as a number (a `QUESTION`'s
//! `DEFAULTVALUE="2048"`) compares and computes as that number. PowerShell would compare `'512'
//! -gt 2048` as text (and find it true); the files mean the number.

use std::collections::HashMap;
use std::fmt;

/// The longest code accepted, in bytes.
pub const MAX_CODE_BYTES: usize = 64 * 1024;
/// The deepest nesting of blocks and parentheses accepted.
pub const MAX_DEPTH: usize = 32;
/// The most statements one evaluation executes.
pub const MAX_STATEMENTS: usize = 10_000;

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
    /// A bound was reached (code length, nesting depth, statements executed).
    Limit(String),
}

impl ScriptError {
    /// The line of the problem (1-based within the code), when there is one.
    pub fn line(&self) -> Option<u32> {
        match self {
            ScriptError::Unsupported { line, .. }
            | ScriptError::Syntax { line, .. }
            | ScriptError::Eval { line, .. } => Some(*line),
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

    fn type_name(&self) -> &'static str {
        match self {
            ScriptValue::Null => "$null",
            ScriptValue::Bool(_) => "a boolean",
            ScriptValue::Number(_) => "a number",
            ScriptValue::Str(_) => "a string",
            ScriptValue::Collection { .. } => "a counter collection",
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

// ---------------------------------------------------------------------------------------------
// Lexer

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Var(String),
    Num(f64),
    Str(String),
    /// A bare word: a keyword, a command or a label.
    Word(String),
    /// `-eq`, `-Operator` …: a dash followed by letters.
    Dash(String),
    /// `[Int]` …
    Type(String),
    Punct(char),
    /// `::`
    Scope,
    Newline,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: u32,
}

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

fn lex(code: &str) -> Result<Vec<Token>, ScriptError> {
    if code.len() > MAX_CODE_BYTES {
        return Err(ScriptError::Limit(format!(
            "the code is {} bytes long; at most {MAX_CODE_BYTES} are read",
            code.len()
        )));
    }
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut line = 1u32;
    let mut i = 0usize;
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    while let Some(&c) = chars.get(i) {
        match c {
            '\n' => {
                out.push(Token {
                    tok: Tok::Newline,
                    line,
                });
                line += 1;
                i += 1;
            }
            ';' => {
                out.push(Token {
                    tok: Tok::Newline,
                    line,
                });
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '#' => {
                while chars.get(i).is_some_and(|&c| c != '\n') {
                    i += 1;
                }
            }
            '$' => {
                let start = i + 1;
                let mut j = start;
                while chars
                    .get(j)
                    .is_some_and(|&c| is_word(c) || (c == ':' && chars.get(j + 1) != Some(&':')))
                {
                    j += 1;
                }
                if j == start {
                    // `$(` subexpression: the `$` is dropped, the parenthesis stays.
                    if chars.get(start) == Some(&'(') {
                        i += 1;
                        continue;
                    }
                    return Err(ScriptError::Syntax {
                        line,
                        what: "a `$` without a variable name".into(),
                    });
                }
                let name: String = chars.get(start..j).unwrap_or_default().iter().collect();
                out.push(Token {
                    tok: Tok::Var(name),
                    line,
                });
                i = j;
            }
            '\'' | '"' => {
                let quote = c;
                let mut s = String::new();
                let mut j = i + 1;
                loop {
                    match chars.get(j) {
                        None => {
                            return Err(ScriptError::Syntax {
                                line,
                                what: "a string without its closing quote".into(),
                            })
                        }
                        Some(&q) if q == quote => {
                            if chars.get(j + 1) == Some(&quote) {
                                s.push(quote);
                                j += 2;
                            } else {
                                j += 1;
                                break;
                            }
                        }
                        Some(&ch) => {
                            if quote == '"' && (ch == '$' || ch == '`') {
                                return Err(ScriptError::Unsupported {
                                    line,
                                    what: "string expansion in double quotes".into(),
                                });
                            }
                            if ch == '\n' {
                                line += 1;
                            }
                            s.push(ch);
                            j += 1;
                        }
                    }
                }
                out.push(Token {
                    tok: Tok::Str(s),
                    line,
                });
                i = j;
            }
            '[' => {
                let mut j = i + 1;
                while chars.get(j).is_some_and(|&c| is_word(c) || c == '.') {
                    j += 1;
                }
                if j > i + 1 && chars.get(j) == Some(&']') {
                    let name: String = chars.get(i + 1..j).unwrap_or_default().iter().collect();
                    out.push(Token {
                        tok: Tok::Type(name),
                        line,
                    });
                    i = j + 1;
                } else {
                    out.push(Token {
                        tok: Tok::Punct('['),
                        line,
                    });
                    i += 1;
                }
            }
            ':' if chars.get(i + 1) == Some(&':') => {
                out.push(Token {
                    tok: Tok::Scope,
                    line,
                });
                i += 2;
            }
            '-' if chars.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic()) => {
                let mut j = i + 1;
                while chars.get(j).is_some_and(|&c| is_word(c)) {
                    j += 1;
                }
                let name: String = chars.get(i + 1..j).unwrap_or_default().iter().collect();
                out.push(Token {
                    tok: Tok::Dash(name),
                    line,
                });
                i = j;
            }
            c if c.is_ascii_digit()
                || (c == '.' && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit())) =>
            {
                let mut j = i;
                while chars
                    .get(j)
                    .is_some_and(|&c| c.is_ascii_alphanumeric() || c == '.')
                {
                    j += 1;
                }
                let text: String = chars.get(i..j).unwrap_or_default().iter().collect();
                match parse_number(&text) {
                    Some(n) => out.push(Token {
                        tok: Tok::Num(n),
                        line,
                    }),
                    None => {
                        return Err(ScriptError::Syntax {
                            line,
                            what: format!("`{text}` is not a number"),
                        })
                    }
                }
                i = j;
            }
            c if is_word(c) => {
                let mut j = i;
                while chars.get(j).is_some_and(|&c| is_word(c) || c == '-') {
                    j += 1;
                }
                let name: String = chars.get(i..j).unwrap_or_default().iter().collect();
                out.push(Token {
                    tok: Tok::Word(name),
                    line,
                });
                i = j;
            }
            '(' | ')' | '{' | '}' | ']' | '=' | '+' | '-' | '*' | '/' | '%' | '.' | ',' | '@'
            | '|' | '!' | '<' | '>' | '&' | '`' => {
                out.push(Token {
                    tok: Tok::Punct(c),
                    line,
                });
                i += 1;
            }
            other => {
                return Err(ScriptError::Syntax {
                    line,
                    what: format!("unexpected character `{other}`"),
                })
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Parser

#[derive(Clone, Debug)]
enum Expr {
    Lit(ScriptValue),
    Var(String),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Cast(Cast, Box<Expr>),
    Round(Box<Expr>, Option<Box<Expr>>),
    Abs(Box<Expr>),
    Count(Box<Expr>),
    Upper(Box<Expr>, bool),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Cmp(Operator),
    Ne,
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cast {
    Int,
    Double,
    Str,
}

#[derive(Clone, Debug)]
enum Stmt {
    Assign {
        var: String,
        cast: Option<Cast>,
        value: Expr,
        line: u32,
    },
    If {
        branches: Vec<(Expr, Vec<Stmt>)>,
        otherwise: Option<Vec<Stmt>>,
        line: u32,
    },
    Switch {
        value: Expr,
        cases: Vec<(Option<Expr>, Vec<Stmt>)>,
        line: u32,
    },
    StaticThreshold {
        args: Vec<(String, Expr)>,
        line: u32,
    },
}

/// Parsed threshold code, ready to evaluate any number of times.
#[derive(Clone, Debug)]
pub struct Script {
    body: Vec<Stmt>,
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }

    fn line(&self) -> u32 {
        self.toks
            .get(self.pos)
            .or_else(|| self.toks.last())
            .map_or(1, |t| t.line)
    }

    fn bump(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| t.tok.clone());
        self.pos += 1;
        t
    }

    fn syntax(&self, what: impl Into<String>) -> ScriptError {
        ScriptError::Syntax {
            line: self.line(),
            what: what.into(),
        }
    }

    fn unsupported(&self, what: impl Into<String>) -> ScriptError {
        ScriptError::Unsupported {
            line: self.line(),
            what: what.into(),
        }
    }

    fn skip_newlines(&mut self) {
        while self.peek() == Some(&Tok::Newline) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, c: char) -> Result<(), ScriptError> {
        self.skip_newlines();
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.syntax(format!("`{c}` expected")))
        }
    }

    fn enter(&mut self) -> Result<(), ScriptError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ScriptError::Limit(format!(
                "line {}: nesting deeper than {MAX_DEPTH} levels",
                self.line()
            )));
        }
        Ok(())
    }

    fn statements(&mut self, until_brace: bool) -> Result<Vec<Stmt>, ScriptError> {
        let mut out = Vec::new();
        loop {
            self.skip_newlines();
            match self.peek() {
                None if until_brace => return Err(self.syntax("`}` expected")),
                None => return Ok(out),
                Some(Tok::Punct('}')) if until_brace => {
                    self.pos += 1;
                    return Ok(out);
                }
                _ => out.push(self.statement()?),
            }
        }
    }

    fn block(&mut self) -> Result<Vec<Stmt>, ScriptError> {
        self.expect('{')?;
        self.enter()?;
        let body = self.statements(true)?;
        self.depth -= 1;
        Ok(body)
    }

    fn end_of_statement(&mut self) -> Result<(), ScriptError> {
        match self.peek() {
            None | Some(Tok::Newline) | Some(Tok::Punct('}')) => Ok(()),
            Some(t) => {
                let t = t.clone();
                Err(self.syntax(format!("unexpected {} after the statement", describe(&t))))
            }
        }
    }

    fn statement(&mut self) -> Result<Stmt, ScriptError> {
        let line = self.line();
        match self.peek().cloned() {
            Some(Tok::Type(t)) if matches!(self.peek_at(1), Some(Tok::Var(_))) => {
                let cast =
                    cast_of(&t).ok_or_else(|| self.unsupported(format!("the type [{t}]")))?;
                self.pos += 1;
                self.assignment(Some(cast), line)
            }
            Some(Tok::Var(_)) if self.peek_at(1) == Some(&Tok::Punct('=')) => {
                self.assignment(None, line)
            }
            Some(Tok::Word(w)) => match w.to_ascii_lowercase().as_str() {
                "if" => self.if_statement(line),
                "switch" => self.switch_statement(line),
                "staticthreshold" => {
                    self.pos += 1;
                    let mut args = Vec::new();
                    while let Some(Tok::Dash(name)) = self.peek().cloned() {
                        self.pos += 1;
                        let value = self.expr_operand()?;
                        args.push((name, value));
                    }
                    self.end_of_statement()?;
                    Ok(Stmt::StaticThreshold { args, line })
                }
                "for" | "foreach" | "while" | "do" | "until" => {
                    Err(self.unsupported(format!("the loop `{w}`")))
                }
                "function" | "filter" | "param" | "return" | "break" | "continue" | "exit"
                | "throw" | "trap" | "try" => Err(self.unsupported(format!("`{w}`"))),
                _ => Err(self.unsupported(format!("the command `{w}`"))),
            },
            Some(Tok::Type(t)) => Err(self.unsupported(format!("a statement starting with [{t}]"))),
            Some(t) => Err(self.unsupported(format!("a statement starting with {}", describe(&t)))),
            None => Err(self.syntax("a statement expected")),
        }
    }

    fn assignment(&mut self, cast: Option<Cast>, line: u32) -> Result<Stmt, ScriptError> {
        let Some(Tok::Var(var)) = self.bump() else {
            return Err(self.syntax("a variable expected"));
        };
        if var.contains(':') {
            return Err(self.unsupported(format!("the scoped variable ${var}")));
        }
        self.expect('=')?;
        let value = self.expr()?;
        self.end_of_statement()?;
        Ok(Stmt::Assign {
            var,
            cast,
            value,
            line,
        })
    }

    fn condition(&mut self) -> Result<Expr, ScriptError> {
        self.expect('(')?;
        self.enter()?;
        let e = self.expr()?;
        self.depth -= 1;
        self.expect(')')?;
        Ok(e)
    }

    fn if_statement(&mut self, line: u32) -> Result<Stmt, ScriptError> {
        self.pos += 1;
        let mut branches = vec![(self.condition()?, self.block()?)];
        let mut otherwise = None;
        loop {
            // `Else` / `ElseIf` may stand on the next line.
            let save = self.pos;
            self.skip_newlines();
            match self.peek() {
                Some(Tok::Word(w)) if w.eq_ignore_ascii_case("elseif") => {
                    self.pos += 1;
                    branches.push((self.condition()?, self.block()?));
                }
                Some(Tok::Word(w)) if w.eq_ignore_ascii_case("else") => {
                    self.pos += 1;
                    otherwise = Some(self.block()?);
                    break;
                }
                _ => {
                    self.pos = save;
                    break;
                }
            }
        }
        Ok(Stmt::If {
            branches,
            otherwise,
            line,
        })
    }

    fn switch_statement(&mut self, line: u32) -> Result<Stmt, ScriptError> {
        self.pos += 1;
        if let Some(Tok::Dash(opt)) = self.peek() {
            return Err(self.unsupported(format!("switch -{opt}")));
        }
        let value = self.condition()?;
        self.expect('{')?;
        self.enter()?;
        let mut cases = Vec::new();
        loop {
            self.skip_newlines();
            match self.peek().cloned() {
                Some(Tok::Punct('}')) => {
                    self.pos += 1;
                    break;
                }
                Some(Tok::Word(w)) if w.eq_ignore_ascii_case("default") => {
                    self.pos += 1;
                    cases.push((None, self.block()?));
                }
                Some(Tok::Str(s)) | Some(Tok::Word(s)) => {
                    self.pos += 1;
                    cases.push((Some(Expr::Lit(ScriptValue::Str(s))), self.block()?));
                }
                Some(Tok::Num(n)) => {
                    self.pos += 1;
                    cases.push((Some(Expr::Lit(ScriptValue::Number(n))), self.block()?));
                }
                Some(Tok::Punct('-')) if matches!(self.peek_at(1), Some(Tok::Num(_))) => {
                    self.pos += 1;
                    let Some(Tok::Num(n)) = self.bump() else {
                        return Err(self.syntax("a number expected"));
                    };
                    cases.push((Some(Expr::Lit(ScriptValue::Number(-n))), self.block()?));
                }
                None => return Err(self.syntax("`}` expected to close the switch")),
                Some(t) => {
                    return Err(self.unsupported(format!("the switch label {}", describe(&t))))
                }
            }
        }
        self.depth -= 1;
        Ok(Stmt::Switch { value, cases, line })
    }

    /// A command argument: a primary with its postfixes (`$X`, `'gt'`, `100MB`, `$(…)`).
    /// A bare word there is a string, as in PowerShell's argument mode (`-Operator gt`).
    fn expr_operand(&mut self) -> Result<Expr, ScriptError> {
        if let Some(Tok::Word(w)) = self.peek().cloned() {
            self.pos += 1;
            return Ok(Expr::Lit(ScriptValue::Str(w)));
        }
        self.unary()
    }

    fn expr(&mut self) -> Result<Expr, ScriptError> {
        self.logical()
    }

    fn logical(&mut self) -> Result<Expr, ScriptError> {
        let mut left = self.comparison()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Dash(d)) if d.eq_ignore_ascii_case("and") => BinOp::And,
                Some(Tok::Dash(d)) if d.eq_ignore_ascii_case("or") => BinOp::Or,
                _ => return Ok(left),
            };
            self.pos += 1;
            self.skip_newlines();
            let right = self.comparison()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn comparison(&mut self) -> Result<Expr, ScriptError> {
        let mut left = self.additive()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Dash(d)) => match d.to_ascii_lowercase().as_str() {
                    "eq" | "ieq" => BinOp::Cmp(Operator::Eq),
                    "ne" | "ine" => BinOp::Ne,
                    "gt" | "igt" => BinOp::Cmp(Operator::Gt),
                    "ge" | "ige" => BinOp::Cmp(Operator::Ge),
                    "lt" | "ilt" => BinOp::Cmp(Operator::Lt),
                    "le" | "ile" => BinOp::Cmp(Operator::Le),
                    "and" | "or" => return Ok(left),
                    other => return Err(self.unsupported(format!("the operator -{other}"))),
                },
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.additive()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn additive(&mut self) -> Result<Expr, ScriptError> {
        let mut left = self.multiplicative()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Punct('+')) => BinOp::Add,
                Some(Tok::Punct('-')) => BinOp::Sub,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.multiplicative()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn multiplicative(&mut self) -> Result<Expr, ScriptError> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Punct('*')) => BinOp::Mul,
                Some(Tok::Punct('/')) => BinOp::Div,
                Some(Tok::Punct('%')) => BinOp::Rem,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.unary()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr, ScriptError> {
        self.enter()?;
        let e = self.unary_inner();
        self.depth -= 1;
        e
    }

    fn unary_inner(&mut self) -> Result<Expr, ScriptError> {
        match self.peek().cloned() {
            Some(Tok::Punct('-')) => {
                self.pos += 1;
                Ok(Expr::Neg(Box::new(self.unary()?)))
            }
            Some(Tok::Punct('+')) => {
                self.pos += 1;
                self.unary()
            }
            Some(Tok::Punct('!')) => {
                self.pos += 1;
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some(Tok::Dash(d)) if d.eq_ignore_ascii_case("not") => {
                self.pos += 1;
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some(Tok::Type(t)) if self.peek_at(1) == Some(&Tok::Scope) => {
                self.pos += 2;
                self.static_call(&t)
            }
            Some(Tok::Type(t)) => {
                let cast =
                    cast_of(&t).ok_or_else(|| self.unsupported(format!("the type [{t}]")))?;
                self.pos += 1;
                Ok(Expr::Cast(cast, Box::new(self.unary()?)))
            }
            _ => self.postfix(),
        }
    }

    fn static_call(&mut self, ty: &str) -> Result<Expr, ScriptError> {
        let Some(Tok::Word(method)) = self.bump() else {
            return Err(self.syntax(format!("a method name expected after [{ty}]::")));
        };
        if !ty.eq_ignore_ascii_case("math") && !ty.eq_ignore_ascii_case("system.math") {
            return Err(self.unsupported(format!("[{ty}]::{method}")));
        }
        self.expect('(')?;
        self.enter()?;
        let first = self.expr()?;
        let mut rest = Vec::new();
        while self.peek() == Some(&Tok::Punct(',')) {
            self.pos += 1;
            rest.push(self.expr()?);
        }
        self.depth -= 1;
        self.expect(')')?;
        match (method.to_ascii_lowercase().as_str(), rest.len()) {
            ("round", 0) => Ok(Expr::Round(Box::new(first), None)),
            ("round", 1) => Ok(Expr::Round(Box::new(first), rest.pop().map(Box::new))),
            ("abs", 0) => Ok(Expr::Abs(Box::new(first))),
            _ => Err(self.unsupported(format!(
                "[{ty}]::{method} with {} arguments",
                rest.len() + 1
            ))),
        }
    }

    fn postfix(&mut self) -> Result<Expr, ScriptError> {
        let mut e = self.primary()?;
        loop {
            match self.peek() {
                Some(Tok::Punct('.')) => {
                    self.pos += 1;
                    let Some(Tok::Word(member)) = self.bump() else {
                        return Err(self.syntax("a member name expected after `.`"));
                    };
                    let call = self.peek() == Some(&Tok::Punct('('));
                    if call {
                        self.pos += 1;
                        if self.peek() != Some(&Tok::Punct(')')) {
                            return Err(self.unsupported(format!(".{member}() with arguments")));
                        }
                        self.pos += 1;
                    }
                    e = match (member.to_ascii_lowercase().as_str(), call) {
                        ("count", false) => Expr::Count(Box::new(e)),
                        ("toupper", true) => Expr::Upper(Box::new(e), true),
                        ("tolower", true) => Expr::Upper(Box::new(e), false),
                        _ => {
                            return Err(self.unsupported(format!(
                                "the member .{member}{}",
                                if call { "()" } else { "" }
                            )))
                        }
                    };
                }
                Some(Tok::Punct('[')) => return Err(self.unsupported("indexing with [ ]")),
                _ => return Ok(e),
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, ScriptError> {
        match self.bump() {
            Some(Tok::Num(n)) => Ok(Expr::Lit(ScriptValue::Number(n))),
            Some(Tok::Str(s)) => Ok(Expr::Lit(ScriptValue::Str(s))),
            Some(Tok::Var(v)) => Ok(match v.to_ascii_lowercase().as_str() {
                "true" => Expr::Lit(ScriptValue::Bool(true)),
                "false" => Expr::Lit(ScriptValue::Bool(false)),
                "null" => Expr::Lit(ScriptValue::Null),
                _ if v.contains(':') => {
                    self.pos -= 1;
                    return Err(self.unsupported(format!("the scoped variable ${v}")));
                }
                _ => Expr::Var(v),
            }),
            Some(Tok::Punct('(')) => {
                self.enter()?;
                self.skip_newlines();
                let e = self.expr()?;
                self.depth -= 1;
                self.expect(')')?;
                Ok(e)
            }
            Some(Tok::Punct('@')) => {
                self.pos -= 1;
                Err(self.unsupported("arrays and hash tables (@)"))
            }
            Some(Tok::Word(w)) => {
                self.pos -= 1;
                Err(self.unsupported(format!("the command `{w}` in an expression")))
            }
            Some(t) => {
                self.pos -= 1;
                Err(self.syntax(format!("unexpected {}", describe(&t))))
            }
            None => Err(self.syntax("an expression expected at the end of the code")),
        }
    }
}

fn cast_of(t: &str) -> Option<Cast> {
    Some(match t.to_ascii_lowercase().as_str() {
        "int" | "int32" | "int64" | "long" => Cast::Int,
        "double" | "decimal" | "float" | "single" => Cast::Double,
        "string" => Cast::Str,
        _ => return None,
    })
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Var(v) => format!("${v}"),
        Tok::Num(n) => format!("the number {n}"),
        Tok::Str(s) => format!("the string '{s}'"),
        Tok::Word(w) => format!("`{w}`"),
        Tok::Dash(d) => format!("`-{d}`"),
        Tok::Type(t) => format!("[{t}]"),
        Tok::Punct(c) => format!("`{c}`"),
        Tok::Scope => "`::`".into(),
        Tok::Newline => "the end of the line".into(),
    }
}

impl Script {
    /// Parses `code`. An error names the line (1-based within `code`) and what could not be read.
    pub fn parse(code: &str) -> Result<Script, ScriptError> {
        let toks = lex(code)?;
        let mut p = Parser {
            toks,
            pos: 0,
            depth: 0,
        };
        let body = p.statements(false)?;
        Ok(Script { body })
    }

    /// Evaluates the script with `vars` (question values and data source collections; names
    /// compared case-insensitively, as PowerShell does) and returns the `StaticThreshold` calls it
    /// made, in order.
    pub fn evaluate(
        &self,
        vars: &HashMap<String, ScriptValue>,
    ) -> Result<Vec<StaticThreshold>, ScriptError> {
        let mut env = Env {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
                .collect(),
            calls: Vec::new(),
            executed: 0,
        };
        env.run(&self.body)?;
        Ok(env.calls)
    }
}

/// Parses and evaluates `code` in one step (see [`Script::parse`] and [`Script::evaluate`]).
pub fn evaluate(
    code: &str,
    vars: &HashMap<String, ScriptValue>,
) -> Result<Vec<StaticThreshold>, ScriptError> {
    Script::parse(code)?.evaluate(vars)
}

// ---------------------------------------------------------------------------------------------
// Interpreter

struct Env {
    vars: HashMap<String, ScriptValue>,
    calls: Vec<StaticThreshold>,
    executed: usize,
}

fn eval_err(line: u32, what: impl Into<String>) -> ScriptError {
    ScriptError::Eval {
        line,
        what: what.into(),
    }
}

/// The number a value reads as, for arithmetic and numeric comparison.
fn as_number(v: &ScriptValue) -> Option<f64> {
    match v {
        ScriptValue::Number(n) => Some(*n),
        ScriptValue::Bool(b) => Some(f64::from(u8::from(*b))),
        ScriptValue::Null => Some(0.0),
        ScriptValue::Str(s) => parse_number(s.trim()),
        ScriptValue::Collection { .. } => None,
    }
}

fn truthy(v: &ScriptValue) -> bool {
    match v {
        ScriptValue::Null => false,
        ScriptValue::Bool(b) => *b,
        ScriptValue::Number(n) => *n != 0.0,
        ScriptValue::Str(s) => !s.is_empty(),
        ScriptValue::Collection { count, .. } => *count > 0,
    }
}

/// `[Int]`: rounds half to even, must fit `Int32`.
fn to_int(v: &ScriptValue, line: u32) -> Result<f64, ScriptError> {
    let n = match v {
        ScriptValue::Str(s) if s.trim().is_empty() => 0.0,
        _ => as_number(v)
            .ok_or_else(|| eval_err(line, format!("cannot convert {} to [Int]", v.type_name())))?,
    };
    let r = n.round_ties_even();
    if !(f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&r) {
        return Err(eval_err(line, format!("{n} does not fit [Int]")));
    }
    Ok(r)
}

fn display(v: &ScriptValue) -> String {
    match v {
        ScriptValue::Null => String::new(),
        ScriptValue::Bool(true) => "True".into(),
        ScriptValue::Bool(false) => "False".into(),
        ScriptValue::Number(n) => n.to_string(),
        ScriptValue::Str(s) => s.clone(),
        ScriptValue::Collection { name, .. } => format!("${name}"),
    }
}

/// PowerShell's comparison: strings case-insensitively, numbers numerically (a string that reads
/// as a number is that number).
fn compare(a: &ScriptValue, b: &ScriptValue) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (ScriptValue::Null, ScriptValue::Null) => Some(std::cmp::Ordering::Equal),
        (ScriptValue::Null, _) | (_, ScriptValue::Null) => None,
        _ => match (as_number(a), as_number(b)) {
            (Some(x), Some(y)) => x.partial_cmp(&y),
            _ => Some(display(a).to_lowercase().cmp(&display(b).to_lowercase())),
        },
    }
}

impl Env {
    fn tick(&mut self) -> Result<(), ScriptError> {
        self.executed += 1;
        if self.executed > MAX_STATEMENTS {
            return Err(ScriptError::Limit(format!(
                "more than {MAX_STATEMENTS} statements executed"
            )));
        }
        Ok(())
    }

    fn run(&mut self, body: &[Stmt]) -> Result<(), ScriptError> {
        for s in body {
            self.tick()?;
            match s {
                Stmt::Assign {
                    var,
                    cast,
                    value,
                    line,
                } => {
                    let mut v = self.eval(value, *line)?;
                    if let Some(c) = cast {
                        v = self.cast(*c, &v, *line)?;
                    }
                    self.vars.insert(var.to_ascii_lowercase(), v);
                }
                Stmt::If {
                    branches,
                    otherwise,
                    line,
                } => {
                    let mut done = false;
                    for (cond, body) in branches {
                        if truthy(&self.eval(cond, *line)?) {
                            self.run(body)?;
                            done = true;
                            break;
                        }
                    }
                    if !done {
                        if let Some(body) = otherwise {
                            self.run(body)?;
                        }
                    }
                }
                Stmt::Switch { value, cases, line } => {
                    let v = self.eval(value, *line)?;
                    let mut matched = false;
                    for (label, body) in cases {
                        if let Some(label) = label {
                            let l = self.eval(label, *line)?;
                            if compare(&v, &l) == Some(std::cmp::Ordering::Equal) {
                                matched = true;
                                self.run(body)?;
                            }
                        }
                    }
                    if !matched {
                        for (label, body) in cases {
                            if label.is_none() {
                                self.run(body)?;
                            }
                        }
                    }
                }
                Stmt::StaticThreshold { args, line } => {
                    let call = self.static_threshold(args, *line)?;
                    self.calls.push(call);
                }
            }
        }
        Ok(())
    }

    fn static_threshold(
        &mut self,
        args: &[(String, Expr)],
        line: u32,
    ) -> Result<StaticThreshold, ScriptError> {
        let mut collection = None;
        let mut operator = None;
        let mut threshold = None;
        let mut trend_only = false;
        for (name, expr) in args {
            let v = self.eval(expr, line)?;
            match name.to_ascii_lowercase().as_str() {
                "collectionofcounterinstances" => match v {
                    ScriptValue::Collection { name, .. } => collection = Some(name),
                    other => {
                        return Err(eval_err(
                            line,
                            format!(
                            "-CollectionOfCounterInstances is {}, not a data source's collection",
                            other.type_name()
                        ),
                        ))
                    }
                },
                "operator" => {
                    let s = display(&v);
                    operator = Some(Operator::parse(&s).ok_or_else(|| {
                        eval_err(line, format!("-Operator '{s}' is not gt, ge, lt, le or eq"))
                    })?);
                }
                "threshold" => {
                    threshold = Some(as_number(&v).filter(|n| n.is_finite()).ok_or_else(|| {
                        eval_err(
                            line,
                            format!("-Threshold is {}, not a number", v.type_name()),
                        )
                    })?);
                }
                "istrendonly" => trend_only = truthy(&v),
                other => {
                    return Err(ScriptError::Unsupported {
                        line,
                        what: format!("the StaticThreshold parameter -{other}"),
                    })
                }
            }
        }
        let missing = |p: &str| eval_err(line, format!("StaticThreshold without -{p}"));
        Ok(StaticThreshold {
            collection: collection.ok_or_else(|| missing("CollectionOfCounterInstances"))?,
            operator: operator.ok_or_else(|| missing("Operator"))?,
            threshold: threshold.ok_or_else(|| missing("Threshold"))?,
            trend_only,
        })
    }

    fn cast(&self, c: Cast, v: &ScriptValue, line: u32) -> Result<ScriptValue, ScriptError> {
        Ok(match c {
            Cast::Int => ScriptValue::Number(to_int(v, line)?),
            Cast::Double => ScriptValue::Number(as_number(v).ok_or_else(|| {
                eval_err(
                    line,
                    format!("cannot convert {} to [Double]", v.type_name()),
                )
            })?),
            Cast::Str => ScriptValue::Str(display(v)),
        })
    }

    fn number(&self, e: &Expr, line: u32) -> Result<f64, ScriptError> {
        let v = self.eval(e, line)?;
        as_number(&v).ok_or_else(|| eval_err(line, format!("{} is not a number", v.type_name())))
    }

    fn eval(&self, e: &Expr, line: u32) -> Result<ScriptValue, ScriptError> {
        Ok(match e {
            Expr::Lit(v) => v.clone(),
            Expr::Var(name) => self
                .vars
                .get(&name.to_ascii_lowercase())
                .cloned()
                .ok_or_else(|| eval_err(line, format!("the variable ${name} is not defined")))?,
            Expr::Neg(inner) => ScriptValue::Number(-self.number(inner, line)?),
            Expr::Not(inner) => ScriptValue::Bool(!truthy(&self.eval(inner, line)?)),
            Expr::Cast(c, inner) => self.cast(*c, &self.eval(inner, line)?, line)?,
            Expr::Round(x, digits) => {
                let x = self.number(x, line)?;
                let d = match digits {
                    Some(d) => self.number(d, line)?,
                    None => 0.0,
                };
                if !(0.0..=15.0).contains(&d) || d.fract() != 0.0 {
                    return Err(eval_err(line, format!("[Math]::Round with {d} digits")));
                }
                let scale = 10f64.powi(d as i32);
                ScriptValue::Number((x * scale).round_ties_even() / scale)
            }
            Expr::Abs(x) => ScriptValue::Number(self.number(x, line)?.abs()),
            Expr::Count(inner) => match self.eval(inner, line)? {
                ScriptValue::Collection { count, .. } => ScriptValue::Number(count as f64),
                ScriptValue::Null => ScriptValue::Number(0.0),
                ScriptValue::Str(_) | ScriptValue::Number(_) | ScriptValue::Bool(_) => {
                    ScriptValue::Number(1.0)
                }
            },
            Expr::Upper(inner, upper) => {
                let v = self.eval(inner, line)?;
                let ScriptValue::Str(s) = v else {
                    return Err(eval_err(
                        line,
                        format!(".ToUpper()/.ToLower() on {}", v.type_name()),
                    ));
                };
                ScriptValue::Str(if *upper {
                    s.to_uppercase()
                } else {
                    s.to_lowercase()
                })
            }
            Expr::Bin(op, a, b) => {
                let x = self.eval(a, line)?;
                match op {
                    BinOp::And => {
                        return Ok(ScriptValue::Bool(
                            truthy(&x) && truthy(&self.eval(b, line)?),
                        ))
                    }
                    BinOp::Or => {
                        return Ok(ScriptValue::Bool(
                            truthy(&x) || truthy(&self.eval(b, line)?),
                        ))
                    }
                    _ => {}
                }
                let y = self.eval(b, line)?;
                match op {
                    BinOp::Cmp(o) => {
                        use std::cmp::Ordering::*;
                        let ord = compare(&x, &y);
                        ScriptValue::Bool(match o {
                            Operator::Eq => ord == Some(Equal),
                            Operator::Gt => ord == Some(Greater),
                            Operator::Ge => matches!(ord, Some(Greater | Equal)),
                            Operator::Lt => ord == Some(Less),
                            Operator::Le => matches!(ord, Some(Less | Equal)),
                        })
                    }
                    BinOp::Ne => {
                        ScriptValue::Bool(compare(&x, &y) != Some(std::cmp::Ordering::Equal))
                    }
                    BinOp::Add => match (&x, &y) {
                        (ScriptValue::Str(s), _) if as_number(&x).is_none() => {
                            ScriptValue::Str(format!("{s}{}", display(&y)))
                        }
                        _ => ScriptValue::Number(self.arith(&x, &y, line, |p, q| p + q)?),
                    },
                    BinOp::Sub => ScriptValue::Number(self.arith(&x, &y, line, |p, q| p - q)?),
                    BinOp::Mul => ScriptValue::Number(self.arith(&x, &y, line, |p, q| p * q)?),
                    BinOp::Div | BinOp::Rem => {
                        let q = as_number(&y).unwrap_or(f64::NAN);
                        if q == 0.0 {
                            return Err(eval_err(line, "division by zero"));
                        }
                        if *op == BinOp::Div {
                            ScriptValue::Number(self.arith(&x, &y, line, |p, q| p / q)?)
                        } else {
                            ScriptValue::Number(self.arith(&x, &y, line, |p, q| p % q)?)
                        }
                    }
                    BinOp::And | BinOp::Or => unreachable_bool(),
                }
            }
        })
    }

    fn arith(
        &self,
        x: &ScriptValue,
        y: &ScriptValue,
        line: u32,
        f: impl Fn(f64, f64) -> f64,
    ) -> Result<f64, ScriptError> {
        match (as_number(x), as_number(y)) {
            (Some(p), Some(q)) => {
                let r = f(p, q);
                if r.is_finite() {
                    Ok(r)
                } else {
                    Err(eval_err(line, "the result is not a finite number"))
                }
            }
            _ => Err(eval_err(
                line,
                format!("arithmetic on {} and {}", x.type_name(), y.type_name()),
            )),
        }
    }
}

/// `-and` / `-or` are handled before both operands are evaluated; this arm is never taken.
fn unreachable_bool() -> ScriptValue {
    ScriptValue::Null
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
        let e = evaluate("$a = 1\nFor ($i=0;$i -lt 3;$i++)\n{ }", &v).unwrap_err();
        assert_eq!(e.to_string(), "line 2: the loop `For` is not evaluated");
        let e = evaluate("\n\nCreateAlert -TimeSliceIndex 1", &v).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 3: the command `CreateAlert` is not evaluated"
        );
        let e = evaluate("$x = $global:oPal.QuantizedTime", &v).unwrap_err();
        assert_eq!(e.line(), Some(1));
        let e = evaluate("$x = @{}", &v).unwrap_err();
        assert!(matches!(e, ScriptError::Unsupported { .. }));
        let e = evaluate("$x = \"$($y)\"", &v).unwrap_err();
        assert!(matches!(e, ScriptError::Unsupported { .. }));
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
