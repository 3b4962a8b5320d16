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
    /// `[Math]::Name(args)`.
    Math(String, Vec<Expr>),
    /// `x.Name` (a property).
    Member(Box<Expr>, String),
    /// `x.Name(args)` (a method).
    Method(Box<Expr>, String, Vec<Expr>),
    /// `x[i]`.
    Index(Box<Expr>, Box<Expr>),
    /// `@( … )`: an array.
    Array(Vec<Expr>),
    /// `@{ k = v; … }`: a hash table.
    Hash(Vec<(Expr, Expr)>),
    /// A double-quoted string with `$x` / `$( … )` in it: its parts joined.
    Expand(Vec<Expr>),
    /// A command in an expression (`IsGreaterThanZero $x`, `New-Object …`): its name and its
    /// arguments (`-Name value` with the name, positional ones without).
    Command(String, Vec<(Option<String>, Expr)>),
    /// `$x++`, `++$x`, `$x--`: the place, +1 or -1, whether the value is the one after.
    Incr(Box<Expr>, f64, bool),
    /// `$( … )` inside an expanding string: statements, their output joined.
    Sub(Vec<Stmt>),
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
    /// `-like` (wildcards `*` and `?`); `-notlike` with `true`.
    Like(bool),
    /// `-contains`; `-notcontains` with `true`.
    Contains(bool),
    /// `-replace` (a regular expression).
    Replace,
    /// `-match` (a regular expression); `-notmatch` with `true`.
    Match(bool),
}

/// A cast (`[Int]`, `[Int64]`, `[Double]`, `[String]`, `[Void]`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Cast {
    Int,
    Long,
    Double,
    Str,
    Void,
}

/// A statement; `line` is where it starts.
#[derive(Clone, Debug)]
pub(super) enum Stmt {
    /// `place = value`, `place += value` … (`op` the arithmetic of a compound assignment);
    /// `cast` for `[Int] $x = …`.
    Assign {
        place: Expr,
        op: Option<BinOp>,
        cast: Option<Cast>,
        value: Expr,
        line: u32,
    },
    /// An expression whose value is dropped (`$i++`, `[void] $a.Add($x)`).
    Expr {
        expr: Expr,
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
    /// `For (init; cond; step) { … }`, and `While (cond) { … }` (no init nor step).
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Box<Stmt>>,
        body: Vec<Stmt>,
        line: u32,
        keyword: &'static str,
    },
    /// `ForEach ($x in items) { … }`.
    ForEach {
        var: String,
        items: Expr,
        body: Vec<Stmt>,
        line: u32,
    },
    Break {
        line: u32,
    },
    Continue {
        line: u32,
    },
    StaticThreshold {
        args: Vec<(String, Expr)>,
        line: u32,
    },
}

/// The most operators and postfixes (`.x`, `[i]`, `(…)`) that wrap an expression, all the
/// expressions being read counted together: the depth of the tree, which evaluating it and
/// dropping it recurse through, stays small whatever the code.
const MAX_CHAIN: usize = 256;

/// The tokens, the next one to read, the nesting depth so far and the operators wrapping the
/// expression being read.
struct Parser {
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
    chain: usize,
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

    /// One more operator or postfix wraps the expression being read.
    fn wrap(&mut self) -> Result<(), ScriptError> {
        self.chain += 1;
        if self.chain > MAX_CHAIN {
            return Err(ScriptError::Limit(format!(
                "line {}: an expression of more than {MAX_CHAIN} operators",
                self.line()
            )));
        }
        Ok(())
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
        if let Some(Tok::Word(w)) = self.peek().cloned() {
            match w.to_ascii_lowercase().as_str() {
                "if" => return self.if_statement(line),
                "switch" => return self.switch_statement(line),
                "for" => return self.for_statement(line),
                "foreach" => return self.foreach_statement(line),
                "while" => {
                    self.pos += 1;
                    let cond = Some(self.condition()?);
                    let body = self.block()?;
                    return Ok(Stmt::For {
                        init: None,
                        cond,
                        step: None,
                        body,
                        line,
                        keyword: "While",
                    });
                }
                "break" | "continue" => {
                    self.pos += 1;
                    self.end_of_statement()?;
                    return Ok(if w.eq_ignore_ascii_case("break") {
                        Stmt::Break { line }
                    } else {
                        Stmt::Continue { line }
                    });
                }
                "staticthreshold" => {
                    self.pos += 1;
                    let mut args = Vec::new();
                    while let Some(Tok::Dash(name)) = self.peek().cloned() {
                        self.pos += 1;
                        let value = self.expr_operand()?;
                        args.push((name, value));
                    }
                    self.end_of_statement()?;
                    return Ok(Stmt::StaticThreshold { args, line });
                }
                "do" | "until" => return Err(self.unsupported(format!("the loop `{w}`"))),
                "function" | "filter" | "param" | "return" | "exit" | "throw" | "trap" | "try" => {
                    return Err(self.unsupported(format!("`{w}`")))
                }
                _ => {}
            }
        }
        let s = self.simple_statement(line)?;
        self.end_of_statement()?;
        Ok(s)
    }

    /// An assignment or an expression, without the end of the statement (also a `For`'s parts).
    fn simple_statement(&mut self, line: u32) -> Result<Stmt, ScriptError> {
        let place = self.expr()?;
        let op = match self.peek() {
            Some(Tok::Punct('=')) => None,
            Some(Tok::AssignOp(c)) => Some(match c {
                '+' => BinOp::Add,
                '-' => BinOp::Sub,
                '*' => BinOp::Mul,
                '/' => BinOp::Div,
                _ => BinOp::Rem,
            }),
            _ => return Ok(Stmt::Expr { expr: place, line }),
        };
        let (cast, place) = match place {
            Expr::Cast(c, inner) if matches!(*inner, Expr::Var(_)) => (Some(c), *inner),
            p => (None, p),
        };
        match &place {
            Expr::Var(v) if v.contains(':') => {
                return Err(self.unsupported(format!("the scoped variable ${v}")))
            }
            Expr::Var(_) | Expr::Index(..) | Expr::Member(..) => {}
            _ => return Err(self.syntax("`=` after something that cannot be assigned")),
        }
        self.pos += 1;
        self.skip_newlines();
        let value = self.expr()?;
        Ok(Stmt::Assign {
            place,
            op,
            cast,
            value,
            line,
        })
    }

    /// One part of `For ( ; ; )`, empty or a simple statement, and the `;` after it unless it is
    /// the `last`. The lexer made each `;` a newline.
    fn for_part(&mut self, last: bool) -> Result<Option<Stmt>, ScriptError> {
        let empty = match self.peek() {
            Some(Tok::Newline) => !last,
            Some(Tok::Punct(')')) => last,
            _ => false,
        };
        let s = if empty {
            None
        } else {
            let l = self.line();
            Some(self.simple_statement(l)?)
        };
        if !last {
            if self.peek() != Some(&Tok::Newline) {
                return Err(self.syntax("`;` expected in `For ( ; ; )`"));
            }
            self.pos += 1;
        }
        Ok(s)
    }

    /// `For (init; cond; step) { … }`: each part may be empty.
    fn for_statement(&mut self, line: u32) -> Result<Stmt, ScriptError> {
        self.pos += 1;
        self.expect('(')?;
        self.enter()?;
        let init = self.for_part(false)?;
        let cond = match self.for_part(false)? {
            None => None,
            Some(Stmt::Expr { expr, .. }) => Some(expr),
            Some(_) => return Err(self.syntax("an assignment as the condition of `For`")),
        };
        let step = self.for_part(true)?;
        self.depth -= 1;
        self.expect(')')?;
        let body = self.block()?;
        Ok(Stmt::For {
            init: init.map(Box::new),
            cond,
            step: step.map(Box::new),
            body,
            line,
            keyword: "For",
        })
    }

    /// `ForEach ($x in items) { … }`.
    fn foreach_statement(&mut self, line: u32) -> Result<Stmt, ScriptError> {
        self.pos += 1;
        self.expect('(')?;
        self.enter()?;
        let Some(Tok::Var(var)) = self.bump() else {
            return Err(self.syntax("a variable expected after `ForEach (`"));
        };
        match self.bump() {
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("in") => {}
            _ => return Err(self.syntax("`in` expected in `ForEach ($x in …)`")),
        }
        let items = self.expr()?;
        self.depth -= 1;
        self.expect(')')?;
        let body = self.block()?;
        Ok(Stmt::ForEach {
            var,
            items,
            body,
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
            // `System.Collections.ArrayList`: a dotted name is one word.
            let mut w = w;
            while self.peek() == Some(&Tok::Punct('.')) {
                let Some(Tok::Word(next)) = self.peek_at(1).cloned() else {
                    break;
                };
                self.pos += 2;
                w = format!("{w}.{next}");
            }
            return Ok(Expr::Lit(ScriptValue::Str(w)));
        }
        self.unary()
    }

    /// A command's arguments, to the end of the statement or the closing `)` / `}`: `-Name
    /// value`, `-Switch` (a name followed by another name or the end) and positional values.
    fn command(&mut self, name: String) -> Result<Expr, ScriptError> {
        let mut args = Vec::new();
        loop {
            match self.peek() {
                None | Some(Tok::Newline | Tok::Punct(')' | '}' | ']' | ',')) => break,
                Some(Tok::Dash(d)) if is_operator(d) => break,
                Some(Tok::Dash(d)) => {
                    let d = d.clone();
                    self.pos += 1;
                    let value = match self.peek() {
                        None
                        | Some(Tok::Newline | Tok::Dash(_) | Tok::Punct(')' | '}' | ']' | ',')) => {
                            Expr::Lit(ScriptValue::Bool(true))
                        }
                        _ => self.expr_operand()?,
                    };
                    args.push((Some(d), value));
                }
                _ => {
                    let value = self.expr_operand()?;
                    args.push((None, value));
                }
            }
        }
        Ok(Expr::Command(name, args))
    }

    fn expr(&mut self) -> Result<Expr, ScriptError> {
        self.logical()
    }

    fn logical(&mut self) -> Result<Expr, ScriptError> {
        let start = self.chain;
        let mut left = self.comparison()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Dash(d)) if d.eq_ignore_ascii_case("and") => BinOp::And,
                Some(Tok::Dash(d)) if d.eq_ignore_ascii_case("or") => BinOp::Or,
                _ => {
                    self.chain = start;
                    return Ok(left);
                }
            };
            self.pos += 1;
            self.wrap()?;
            self.skip_newlines();
            let right = self.comparison()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn comparison(&mut self) -> Result<Expr, ScriptError> {
        let start = self.chain;
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
                    "like" | "ilike" => BinOp::Like(false),
                    "notlike" | "inotlike" => BinOp::Like(true),
                    "contains" | "icontains" => BinOp::Contains(false),
                    "notcontains" | "inotcontains" => BinOp::Contains(true),
                    "replace" | "ireplace" => BinOp::Replace,
                    "match" | "imatch" => BinOp::Match(false),
                    "notmatch" | "inotmatch" => BinOp::Match(true),
                    "and" | "or" => {
                        self.chain = start;
                        return Ok(left);
                    }
                    other => return Err(self.unsupported(format!("the operator -{other}"))),
                },
                _ => {
                    self.chain = start;
                    return Ok(left);
                }
            };
            self.pos += 1;
            self.wrap()?;
            let mut right = self.additive()?;
            // `-replace 'pattern', 'with'`: the two as an array.
            if op == BinOp::Replace && self.peek() == Some(&Tok::Punct(',')) {
                self.pos += 1;
                right = Expr::Array(vec![right, self.additive()?]);
            }
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn additive(&mut self) -> Result<Expr, ScriptError> {
        let start = self.chain;
        let mut left = self.multiplicative()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Punct('+')) => BinOp::Add,
                Some(Tok::Punct('-')) => BinOp::Sub,
                _ => {
                    self.chain = start;
                    return Ok(left);
                }
            };
            self.pos += 1;
            self.wrap()?;
            let right = self.multiplicative()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn multiplicative(&mut self) -> Result<Expr, ScriptError> {
        let start = self.chain;
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Punct('*')) => BinOp::Mul,
                Some(Tok::Punct('/')) => BinOp::Div,
                Some(Tok::Punct('%')) => BinOp::Rem,
                _ => {
                    self.chain = start;
                    return Ok(left);
                }
            };
            self.pos += 1;
            self.wrap()?;
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
        let args = self.arguments()?;
        let arity = match method.to_ascii_lowercase().as_str() {
            "round" => 1..=2,
            "abs" | "floor" | "ceiling" | "truncate" | "sqrt" => 1..=1,
            "min" | "max" | "pow" => 2..=2,
            _ => return Err(self.unsupported(format!("[{ty}]::{method}"))),
        };
        if !arity.contains(&args.len()) {
            return Err(self.unsupported(format!("[{ty}]::{method} with {} arguments", args.len())));
        }
        Ok(Expr::Math(method.to_ascii_lowercase(), args))
    }

    /// `( a, b … )` after a method's name: the arguments.
    fn arguments(&mut self) -> Result<Vec<Expr>, ScriptError> {
        self.expect('(')?;
        self.enter()?;
        let mut args = Vec::new();
        self.skip_newlines();
        if self.peek() != Some(&Tok::Punct(')')) {
            loop {
                args.push(self.expr()?);
                self.skip_newlines();
                if self.peek() != Some(&Tok::Punct(',')) {
                    break;
                }
                self.pos += 1;
                self.skip_newlines();
            }
        }
        self.depth -= 1;
        self.expect(')')?;
        Ok(args)
    }

    fn postfix(&mut self) -> Result<Expr, ScriptError> {
        let start = self.chain;
        let mut e = self.primary()?;
        loop {
            if matches!(self.peek(), Some(Tok::Punct('.' | '[') | Tok::Incr(_))) {
                self.wrap()?;
            }
            match self.peek() {
                Some(Tok::Punct('.')) => {
                    self.pos += 1;
                    let Some(Tok::Word(member)) = self.bump() else {
                        return Err(self.syntax("a member name expected after `.`"));
                    };
                    e = if self.peek() == Some(&Tok::Punct('(')) {
                        let args = self.arguments()?;
                        Expr::Method(Box::new(e), member, args)
                    } else {
                        Expr::Member(Box::new(e), member)
                    };
                }
                Some(Tok::Punct('[')) => {
                    self.pos += 1;
                    self.enter()?;
                    let i = self.expr()?;
                    self.depth -= 1;
                    self.expect(']')?;
                    e = Expr::Index(Box::new(e), Box::new(i));
                }
                Some(Tok::Incr(up)) => {
                    let d = if *up { 1.0 } else { -1.0 };
                    self.pos += 1;
                    e = Expr::Incr(Box::new(e), d, false);
                }
                _ => {
                    self.chain = start;
                    return Ok(e);
                }
            }
        }
    }

    /// `@( … )` (an array of the values, `,` or newlines between them) or `@{ k = v … }` (a hash
    /// table); the `@` is read.
    fn array_or_hash(&mut self) -> Result<Expr, ScriptError> {
        let hash = match self.bump() {
            Some(Tok::Punct('(')) => false,
            Some(Tok::Punct('{')) => true,
            _ => return Err(self.syntax("`(` or `{` expected after `@`")),
        };
        let close = if hash { '}' } else { ')' };
        self.enter()?;
        let mut items = Vec::new();
        let mut pairs = Vec::new();
        loop {
            while matches!(self.peek(), Some(Tok::Newline | Tok::Punct(','))) {
                self.pos += 1;
            }
            if self.peek() == Some(&Tok::Punct(close)) {
                self.pos += 1;
                break;
            }
            if self.peek().is_none() {
                return Err(self.syntax(format!("`{close}` expected")));
            }
            if hash {
                let key = self.expr_operand()?;
                self.expect('=')?;
                pairs.push((key, self.expr()?));
            } else {
                items.push(self.expr()?);
            }
        }
        self.depth -= 1;
        Ok(if hash {
            Expr::Hash(pairs)
        } else {
            Expr::Array(items)
        })
    }

    /// The parts of an expanding string: text, `$name` and `$( … )` (parsed as code).
    fn expand(&mut self, text: &str) -> Result<Expr, ScriptError> {
        let line = self.line();
        let chars: Vec<char> = text.chars().collect();
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            if c == '\u{0}' && chars.get(i + 1) == Some(&'$') {
                lit.push('$');
                i += 2;
                continue;
            }
            if c != '$' {
                lit.push(c);
                i += 1;
                continue;
            }
            if chars.get(i + 1) == Some(&'(') {
                let mut depth = 0usize;
                let mut j = i + 1;
                while let Some(&d) = chars.get(j) {
                    match d {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                let inner: String = chars.get(i + 2..j).unwrap_or_default().iter().collect();
                let body = parse_nested(&inner, self.depth + 1).map_err(|e| relined(e, line))?;
                parts.push(Expr::Lit(ScriptValue::Str(std::mem::take(&mut lit))));
                parts.push(Expr::Sub(body));
                i = j + 1;
                continue;
            }
            let mut j = i + 1;
            while chars
                .get(j)
                .is_some_and(|&c| c.is_alphanumeric() || c == '_')
            {
                j += 1;
            }
            if j == i + 1 {
                lit.push('$');
                i += 1;
                continue;
            }
            let name: String = chars.get(i + 1..j).unwrap_or_default().iter().collect();
            parts.push(Expr::Lit(ScriptValue::Str(std::mem::take(&mut lit))));
            parts.push(match name.to_ascii_lowercase().as_str() {
                "true" => Expr::Lit(ScriptValue::Bool(true)),
                "false" => Expr::Lit(ScriptValue::Bool(false)),
                "null" => Expr::Lit(ScriptValue::Null),
                _ => Expr::Var(name),
            });
            i = j;
        }
        parts.push(Expr::Lit(ScriptValue::Str(lit)));
        Ok(Expr::Expand(parts))
    }

    fn primary(&mut self) -> Result<Expr, ScriptError> {
        match self.bump() {
            Some(Tok::Num(n)) => Ok(Expr::Lit(ScriptValue::Number(n))),
            Some(Tok::Str(s)) => Ok(Expr::Lit(ScriptValue::Str(s))),
            Some(Tok::Expand(s)) => self.expand(&s),
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
                let mut e = self.expr()?;
                // `(a, b)`: an array.
                if self.peek() == Some(&Tok::Punct(',')) {
                    let mut items = vec![e];
                    while self.peek() == Some(&Tok::Punct(',')) {
                        self.pos += 1;
                        self.skip_newlines();
                        items.push(self.expr()?);
                    }
                    e = Expr::Array(items);
                }
                self.depth -= 1;
                self.expect(')')?;
                Ok(e)
            }
            Some(Tok::Punct('@')) => self.array_or_hash(),
            Some(Tok::Incr(up)) => {
                let place = self.postfix()?;
                Ok(Expr::Incr(
                    Box::new(place),
                    if up { 1.0 } else { -1.0 },
                    true,
                ))
            }
            Some(Tok::Word(w)) => self.command(w),
            Some(t) => {
                self.pos -= 1;
                Err(self.syntax(format!("unexpected {}", describe(&t))))
            }
            None => Err(self.syntax("an expression expected at the end of the code")),
        }
    }
}

/// Whether `-d` is an operator of an expression (it ends a command's arguments).
fn is_operator(d: &str) -> bool {
    matches!(
        d.to_ascii_lowercase().as_str(),
        "and"
            | "or"
            | "eq"
            | "ne"
            | "gt"
            | "ge"
            | "lt"
            | "le"
            | "like"
            | "notlike"
            | "contains"
            | "notcontains"
    )
}

fn cast_of(t: &str) -> Option<Cast> {
    let t = t.to_ascii_lowercase();
    let t = t.strip_prefix("system.").unwrap_or(&t);
    Some(match t {
        "int" | "int32" => Cast::Int,
        "int64" | "long" => Cast::Long,
        "double" | "decimal" | "float" | "single" => Cast::Double,
        "string" => Cast::Str,
        "void" => Cast::Void,
        _ => return None,
    })
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Var(v) => format!("${v}"),
        Tok::Num(n) => format!("the number {n}"),
        Tok::Str(s) | Tok::Expand(s) => format!("the string '{s}'"),
        Tok::Incr(true) => "`++`".into(),
        Tok::Incr(false) => "`--`".into(),
        Tok::AssignOp(c) => format!("`{c}=`"),
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
    parse_nested(code, 0)
}

/// Parses `code` that stands at nesting `depth` (a `$( … )` in a string).
fn parse_nested(code: &str, depth: usize) -> Result<Vec<Stmt>, ScriptError> {
    if depth > MAX_DEPTH {
        return Err(ScriptError::Limit(format!(
            "nesting deeper than {MAX_DEPTH} levels"
        )));
    }
    let toks = lex(code)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth,
        chain: 0,
    };
    p.statements(false)
}

/// An error of code inside a string, moved to the string's `line`.
fn relined(e: ScriptError, line: u32) -> ScriptError {
    match e {
        ScriptError::Unsupported { what, .. } => ScriptError::Unsupported { line, what },
        ScriptError::Syntax { what, .. } => ScriptError::Syntax { line, what },
        other => other,
    }
}
