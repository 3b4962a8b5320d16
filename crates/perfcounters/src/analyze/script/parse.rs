//! The parser: the syntax tree of threshold code and the recursive descent that builds it from
//! the lexer's tokens.

use super::lex::{lex, Tok, Token};
use super::{Operator, ScriptError, ScriptValue, MAX_DEPTH};

/// An expression.
#[derive(Clone, Debug)]
pub(super) enum Expr {
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

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum BinOp {
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

/// A cast (`[Int]`, `[Double]`, `[String]`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Cast {
    Int,
    Double,
    Str,
}

/// A statement; `line` is where it starts.
#[derive(Clone, Debug)]
pub(super) enum Stmt {
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

/// The tokens, the next one to read and the nesting depth so far.
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

/// Parses `code` into its statements. An error names the line and what could not be read.
pub(super) fn parse(code: &str) -> Result<Vec<Stmt>, ScriptError> {
    let toks = lex(code)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
    };
    p.statements(false)
}
