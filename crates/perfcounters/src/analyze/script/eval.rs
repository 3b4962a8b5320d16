//! The interpreter: walks the syntax tree with the variables given, within the budget of steps and
//! of memory, and records the `StaticThreshold` calls.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::path::fold_case;

use super::parse::{BinOp, Cast, Expr, Stmt};
use super::{
    parse_number, CodeAlert, CounterInstance, Operator, ScriptError, ScriptValue, StaticThreshold,
    MAX_CELLS, MAX_STATEMENTS, MAX_STRING_BYTES, OUTSIDE_SLICE,
};

/// A value during evaluation. Arrays and hash tables are shared, as .NET objects are: `$b = $a`
/// and `$h.Add($k, $a)` hold the same array as `$a`.
#[derive(Clone, Debug)]
pub(super) enum Val {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    /// An array or `ArrayList`.
    List(Rc<RefCell<Vec<Val>>>),
    /// A hash table: keys in the order added, compared case-insensitively.
    Map(Rc<RefCell<Vec<(String, Val)>>>),
    /// A counter instance of a data source, in one time slice.
    Inst(Rc<CounterInstance>),
    /// A data source's collection known only by its size (threshold code outside a slice).
    Coll {
        name: String,
        count: usize,
    },
}

impl Val {
    fn from_script(v: &ScriptValue) -> Val {
        match v {
            ScriptValue::Null => Val::Null,
            ScriptValue::Bool(b) => Val::Bool(*b),
            ScriptValue::Number(n) => Val::Num(*n),
            ScriptValue::Str(s) => Val::Str(s.clone()),
            ScriptValue::Collection { name, count } => Val::Coll {
                name: name.clone(),
                count: *count,
            },
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Val::Null => "$null",
            Val::Bool(_) => "a boolean",
            Val::Num(_) => "a number",
            Val::Str(_) => "a string",
            Val::List(_) => "an array",
            Val::Map(_) => "a hash table",
            Val::Inst(_) => "a counter instance",
            Val::Coll { .. } => "a counter collection",
        }
    }
}

/// What one evaluation leaves: the `StaticThreshold` calls, in order, and the variables at the end.
pub(super) struct Outcome {
    pub(super) calls: Vec<StaticThreshold>,
    pub(super) alerts: Vec<CodeAlert>,
    pub(super) vars: HashMap<String, Val>,
}

/// Runs `body` with `vars` (names compared case-insensitively) and `collections` (variable name,
/// its counter instances in one slice).
pub(super) fn run(
    body: &[Stmt],
    vars: &HashMap<String, ScriptValue>,
    collections: &[(String, Vec<CounterInstance>)],
) -> Result<Outcome, ScriptError> {
    let mut env = Env {
        vars: vars
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), Val::from_script(v)))
            .collect(),
        calls: Vec::new(),
        alerts: Vec::new(),
        in_slice: !collections.is_empty(),
        executed: 0,
        cells: 0,
        bytes: 0,
    };
    if env.in_slice {
        // PAL's slices: one here, index 0.
        env.vars
            .entry("alquantizedtime".into())
            .or_insert_with(|| Val::List(Rc::new(RefCell::new(vec![Val::Num(0.0)]))));
    }
    for (name, instances) in collections {
        let list: Vec<Val> = instances
            .iter()
            .map(|i| Val::Inst(Rc::new(i.clone())))
            .collect();
        env.vars.insert(
            name.to_ascii_lowercase(),
            Val::List(Rc::new(RefCell::new(list))),
        );
    }
    if let Flow::Break(line) | Flow::Continue(line) = env.run(body)? {
        return Err(ScriptError::Unsupported {
            line,
            what: "`break` or `continue` outside a loop".into(),
        });
    }
    Ok(Outcome {
        calls: env.calls,
        alerts: env.alerts,
        vars: env.vars,
    })
}

/// A number of a generated series: `None` for a value that is not one (PAL's statistics skip it).
pub(super) fn number_of(v: &Val) -> Option<f64> {
    as_number(v)
}

/// The entries of a hash table value (`None` for anything else).
pub(super) fn entries(v: &Val) -> Option<Vec<(String, Val)>> {
    match v {
        Val::Map(m) => Some(m.borrow().clone()),
        _ => None,
    }
}

/// The elements of an array value; any other value is an array of itself.
pub(super) fn elements(v: &Val) -> Vec<Val> {
    match v {
        Val::List(l) => l.borrow().clone(),
        Val::Null => Vec::new(),
        other => vec![other.clone()],
    }
}

/// How a statement list ended.
enum Flow {
    Normal,
    Break(u32),
    Continue(u32),
}

struct Env {
    vars: HashMap<String, Val>,
    calls: Vec<StaticThreshold>,
    /// The `CreateAlert` calls (in a time slice).
    alerts: Vec<CodeAlert>,
    /// Whether the code runs in a time slice (counter instances given).
    in_slice: bool,
    /// Statements and loop rounds executed.
    executed: usize,
    /// Array and hash table entries made.
    cells: usize,
    /// String bytes made.
    bytes: usize,
}

fn eval_err(line: u32, what: impl Into<String>) -> ScriptError {
    ScriptError::Eval {
        line,
        what: what.into(),
    }
}

fn unsupported(line: u32, what: impl Into<String>) -> ScriptError {
    ScriptError::Unsupported {
        line,
        what: what.into(),
    }
}

/// The number a value reads as, for arithmetic and numeric comparison.
fn as_number(v: &Val) -> Option<f64> {
    match v {
        Val::Num(n) => Some(*n),
        Val::Bool(b) => Some(f64::from(u8::from(*b))),
        Val::Null => Some(0.0),
        Val::Str(s) => parse_number(s.trim()),
        _ => None,
    }
}

fn truthy(v: &Val) -> bool {
    match v {
        Val::Null => false,
        Val::Bool(b) => *b,
        Val::Num(n) => *n != 0.0,
        Val::Str(s) => !s.is_empty(),
        Val::List(l) => {
            let l = l.borrow();
            match l.as_slice() {
                [] => false,
                [one] => truthy(one),
                _ => true,
            }
        }
        Val::Map(_) | Val::Inst(_) => true,
        Val::Coll { count, .. } => *count > 0,
    }
}

/// `[Int]`: rounds half to even and must fit `Int32`; `[Int64]` must fit `Int64`.
fn to_int(v: &Val, line: u32, long: bool) -> Result<f64, ScriptError> {
    let n = match v {
        Val::Str(s) if s.trim().is_empty() => 0.0,
        _ => as_number(v)
            .ok_or_else(|| eval_err(line, format!("cannot convert {} to [Int]", v.type_name())))?,
    };
    let r = n.round_ties_even();
    let fits = if long {
        (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r)
    } else {
        (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&r)
    };
    if !fits {
        let ty = if long { "[Int64]" } else { "[Int]" };
        return Err(eval_err(line, format!("{n} does not fit {ty}")));
    }
    Ok(r)
}

fn display(v: &Val) -> String {
    match v {
        Val::Null => String::new(),
        Val::Bool(true) => "True".into(),
        Val::Bool(false) => "False".into(),
        Val::Num(n) => n.to_string(),
        Val::Str(s) => s.clone(),
        Val::List(l) => l.borrow().iter().map(display).collect::<Vec<_>>().join(" "),
        Val::Map(_) => "System.Collections.Hashtable".into(),
        Val::Inst(i) => i.path.clone(),
        Val::Coll { name, .. } => format!("${name}"),
    }
}

/// PowerShell's comparison: strings case-insensitively, numbers numerically (a string that reads
/// as a number is that number), `$null` below any other value (as .NET's `Compare`: `$null -lt
/// 0` is true, `$null -ge 0` false, `$null -eq 0` false).
fn compare(a: &Val, b: &Val) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Val::Null, Val::Null) => Some(std::cmp::Ordering::Equal),
        (Val::Null, _) => Some(std::cmp::Ordering::Less),
        (_, Val::Null) => Some(std::cmp::Ordering::Greater),
        (Val::List(_) | Val::Map(_) | Val::Inst(_) | Val::Coll { .. }, _)
        | (_, Val::List(_) | Val::Map(_) | Val::Inst(_) | Val::Coll { .. }) => None,
        _ => match (as_number(a), as_number(b)) {
            (Some(x), Some(y)) => x.partial_cmp(&y),
            // The project's one case rule, so that code comparing instance names agrees with
            // how counter paths match.
            _ => Some(fold_case(&display(a)).cmp(&fold_case(&display(b)))),
        },
    }
}

/// `-like`: `*` any run of characters, `?` one character, case-insensitively.
fn like(text: &str, pattern: &str) -> bool {
    let t: Vec<char> = fold_case(text).chars().collect();
    let p: Vec<char> = fold_case(pattern).chars().collect();
    let (mut ti, mut pi) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || Some(&c) == t.get(ti) => {
                ti += 1;
                pi += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..).unwrap_or_default().iter().all(|&c| c == '*')
}

/// PowerShell's regular expression `pattern` (`-match`, `-replace`), case-insensitively. The
/// `regex` crate runs in linear time and its compiled size is bounded; a pattern it does not
/// read (a back-reference, a look-around) is not evaluated.
fn regex(pattern: &str, line: u32) -> Result<regex::Regex, ScriptError> {
    regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(1 << 20)
        .dfa_size_limit(1 << 20)
        .build()
        .map_err(|e| {
            let why = e.to_string();
            let first = why.lines().last().unwrap_or_default().trim().to_owned();
            unsupported(
                line,
                format!("the regular expression '{pattern}' ({first})"),
            )
        })
}

/// A position or length argument of a string method: a whole number.
fn position(v: &Val, line: u32, method: &str) -> Result<i64, ScriptError> {
    let n = as_number(v).ok_or_else(|| {
        eval_err(
            line,
            format!(".{method}() takes a number, not {}", v.type_name()),
        )
    })?;
    let r = n.round_ties_even();
    if !(-2_147_483_648.0..=2_147_483_647.0).contains(&r) {
        return Err(eval_err(
            line,
            format!(".{method}(): {n} does not fit [Int]"),
        ));
    }
    Ok(r as i64)
}

impl Env {
    fn tick(&mut self, line: u32) -> Result<(), ScriptError> {
        self.executed += 1;
        if self.executed > MAX_STATEMENTS {
            return Err(ScriptError::Exceeded {
                line,
                what: format!("more than {MAX_STATEMENTS} statements executed"),
            });
        }
        Ok(())
    }

    /// Counts `n` more array or hash table entries made.
    fn cells(&mut self, n: usize, line: u32) -> Result<(), ScriptError> {
        self.cells = self.cells.saturating_add(n);
        if self.cells > MAX_CELLS {
            return Err(ScriptError::Exceeded {
                line,
                what: format!("more than {MAX_CELLS} array or hash table entries made"),
            });
        }
        Ok(())
    }

    /// A string made by the code, counted against the budget.
    fn string(&mut self, s: String, line: u32) -> Result<Val, ScriptError> {
        self.bytes = self.bytes.saturating_add(s.len());
        if s.len() > MAX_STRING_BYTES || self.bytes > 64 * MAX_STRING_BYTES {
            return Err(ScriptError::Exceeded {
                line,
                what: format!(
                    "a string longer than {MAX_STRING_BYTES} bytes, or more than {} bytes of strings made",
                    64 * MAX_STRING_BYTES
                ),
            });
        }
        Ok(Val::Str(s))
    }

    fn run(&mut self, body: &[Stmt]) -> Result<Flow, ScriptError> {
        for s in body {
            let flow = self.statement(s)?;
            if !matches!(flow, Flow::Normal) {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    fn statement(&mut self, s: &Stmt) -> Result<Flow, ScriptError> {
        match s {
            Stmt::Assign {
                place,
                op,
                cast,
                value,
                line,
            } => {
                self.tick(*line)?;
                let mut v = self.eval(value, *line)?;
                if let Some(op) = op {
                    let old = self.eval(place, *line)?;
                    v = self.binary(*op, old, v, *line)?;
                }
                if let Some(c) = cast {
                    v = self.cast(*c, &v, *line)?;
                }
                self.assign(place, v, *line)?;
            }
            Stmt::Expr { expr, line } => {
                self.tick(*line)?;
                self.eval(expr, *line)?;
            }
            Stmt::If {
                branches,
                otherwise,
                line,
            } => {
                self.tick(*line)?;
                for (cond, body) in branches {
                    if truthy(&self.eval(cond, *line)?) {
                        return self.run(body);
                    }
                }
                if let Some(body) = otherwise {
                    return self.run(body);
                }
            }
            Stmt::Switch { value, cases, line } => {
                self.tick(*line)?;
                let v = self.eval(value, *line)?;
                let mut matched = false;
                for (label, body) in cases {
                    if let Some(label) = label {
                        let l = self.eval(label, *line)?;
                        if compare(&v, &l) == Some(std::cmp::Ordering::Equal) {
                            matched = true;
                            // `break` leaves the switch, `continue` the case.
                            if let Flow::Break(_) = self.run(body)? {
                                return Ok(Flow::Normal);
                            }
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
            Stmt::For {
                init,
                cond,
                step,
                body,
                line,
                keyword,
            } => {
                self.tick(*line)?;
                self.for_loop(init.as_deref(), cond.as_ref(), step.as_deref(), body, *line)
                    .map_err(|e| in_loop(e, *line, keyword))?;
            }
            Stmt::ForEach {
                var,
                items,
                body,
                line,
            } => {
                self.tick(*line)?;
                let items = elements(&self.eval(items, *line)?);
                for item in items {
                    self.looped(*line, "ForEach")?;
                    self.vars.insert(var.to_ascii_lowercase(), item);
                    match self.run(body).map_err(|e| in_loop(e, *line, "ForEach"))? {
                        Flow::Break(_) => break,
                        Flow::Continue(_) | Flow::Normal => {}
                    }
                }
            }
            Stmt::Break { line } => {
                self.tick(*line)?;
                return Ok(Flow::Break(*line));
            }
            Stmt::Continue { line } => {
                self.tick(*line)?;
                return Ok(Flow::Continue(*line));
            }
            Stmt::StaticThreshold { args, line } => {
                self.tick(*line)?;
                let call = self.static_threshold(args, *line)?;
                self.calls.push(call);
            }
        }
        Ok(Flow::Normal)
    }

    /// `For (init; cond; step) { body }` at `line`.
    fn for_loop(
        &mut self,
        init: Option<&Stmt>,
        cond: Option<&Expr>,
        step: Option<&Stmt>,
        body: &[Stmt],
        line: u32,
    ) -> Result<(), ScriptError> {
        if let Some(init) = init {
            self.statement(init)?;
        }
        loop {
            self.tick(line)?;
            if let Some(c) = cond {
                if !truthy(&self.eval(c, line)?) {
                    return Ok(());
                }
            }
            if let Flow::Break(_) = self.run(body)? {
                return Ok(());
            }
            if let Some(step) = step {
                self.statement(step)?;
            }
        }
    }

    /// One more round of the loop at `line`: counted as a statement.
    fn looped(&mut self, line: u32, keyword: &str) -> Result<(), ScriptError> {
        self.tick(line).map_err(|_| ScriptError::Exceeded {
            line,
            what: format!(
                "the loop `{keyword}` did not end within {MAX_STATEMENTS} statements executed"
            ),
        })
    }

    fn assign(&mut self, place: &Expr, v: Val, line: u32) -> Result<(), ScriptError> {
        match place {
            Expr::Var(name) => {
                self.vars.insert(name.to_ascii_lowercase(), v);
                Ok(())
            }
            Expr::Index(target, index) => {
                let target = self.eval(target, line)?;
                let index = self.eval(index, line)?;
                match target {
                    Val::List(l) => {
                        let i = position(&index, line, "[]")?;
                        let mut l = l.borrow_mut();
                        let len = l.len() as i64;
                        let at = if i < 0 { len + i } else { i };
                        let slot = usize::try_from(at)
                            .ok()
                            .and_then(|a| l.get_mut(a))
                            .ok_or_else(|| {
                                eval_err(
                                    line,
                                    format!("the index {i} is outside the array ({len} items)"),
                                )
                            })?;
                        *slot = v;
                        Ok(())
                    }
                    Val::Map(m) => self.map_set(&m, display(&index), v, line, false),
                    other => Err(eval_err(
                        line,
                        format!("cannot assign to an index of {}", other.type_name()),
                    )),
                }
            }
            Expr::Member(target, name) => match self.eval(target, line)? {
                Val::Map(m) => self.map_set(&m, name.clone(), v, line, false),
                other => Err(eval_err(
                    line,
                    format!("cannot set the property .{name} of {}", other.type_name()),
                )),
            },
            _ => Err(ScriptError::Syntax {
                line,
                what: "`=` after something that cannot be assigned".into(),
            }),
        }
    }

    /// Sets `key` of the hash table `m` to `v`; with `add` (`.Add(k, v)`), a key already there
    /// keeps its value: `Hashtable.Add` throws, and PowerShell reports the error and goes on
    /// with the next statement.
    fn map_set(
        &mut self,
        m: &Rc<RefCell<Vec<(String, Val)>>>,
        key: String,
        v: Val,
        line: u32,
        add: bool,
    ) -> Result<(), ScriptError> {
        let mut m = m.borrow_mut();
        if let Some(slot) = m.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(&key)) {
            if !add {
                slot.1 = v;
            }
            return Ok(());
        }
        self.cells(1, line)?;
        m.push((key, v));
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
                    Val::Coll { name, .. } => collection = Some(name),
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
                    return Err(unsupported(
                        line,
                        format!("the StaticThreshold parameter -{other}"),
                    ))
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

    fn cast(&mut self, c: Cast, v: &Val, line: u32) -> Result<Val, ScriptError> {
        Ok(match c {
            Cast::Int => Val::Num(to_int(v, line, false)?),
            Cast::Long => Val::Num(to_int(v, line, true)?),
            Cast::Double => Val::Num(as_number(v).ok_or_else(|| {
                eval_err(
                    line,
                    format!("cannot convert {} to [Double]", v.type_name()),
                )
            })?),
            Cast::Str => self.string(display(v), line)?,
            Cast::Void => Val::Null,
        })
    }

    fn number(&mut self, e: &Expr, line: u32) -> Result<f64, ScriptError> {
        let v = self.eval(e, line)?;
        as_number(&v).ok_or_else(|| eval_err(line, format!("{} is not a number", v.type_name())))
    }

    fn eval(&mut self, e: &Expr, line: u32) -> Result<Val, ScriptError> {
        Ok(match e {
            Expr::Lit(v) => Val::from_script(v),
            Expr::Var(name) => self
                .vars
                .get(&name.to_ascii_lowercase())
                .cloned()
                .ok_or_else(|| eval_err(line, format!("the variable ${name} is not defined")))?,
            Expr::Neg(inner) => Val::Num(-self.number(inner, line)?),
            Expr::Not(inner) => Val::Bool(!truthy(&self.eval(inner, line)?)),
            Expr::Cast(c, inner) => {
                let v = self.eval(inner, line)?;
                self.cast(*c, &v, line)?
            }
            Expr::Math(name, args) => self.math(name, args, line)?,
            Expr::Member(target, name) => {
                let t = self.eval(target, line)?;
                member(&t, name, line)?
            }
            Expr::Method(target, name, args) => {
                let t = self.eval(target, line)?;
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(self.eval(a, line)?);
                }
                self.method(&t, name, &values, line)?
            }
            Expr::Index(target, index) => {
                let t = self.eval(target, line)?;
                let i = self.eval(index, line)?;
                index_of(&t, &i, line)?
            }
            Expr::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    let v = self.eval(item, line)?;
                    // `@( … )` flattens arrays inside it.
                    out.extend(elements(&v));
                }
                self.cells(out.len(), line)?;
                Val::List(Rc::new(RefCell::new(out)))
            }
            Expr::Hash(pairs) => {
                let m = Rc::new(RefCell::new(Vec::new()));
                for (k, v) in pairs {
                    let k = self.eval(k, line)?;
                    let v = self.eval(v, line)?;
                    self.map_set(&m, display(&k), v, line, true)?;
                }
                Val::Map(m)
            }
            Expr::Expand(parts) => {
                let mut s = String::new();
                for p in parts {
                    let v = self.eval(p, line)?;
                    s.push_str(&display(&v));
                    if s.len() > MAX_STRING_BYTES {
                        break;
                    }
                }
                self.string(s, line)?
            }
            Expr::Sub(body) => self.sub(body).map_err(|e| at_line(e, line))?,
            Expr::Command(name, args) => self.command(name, args, line)?,
            Expr::Incr(place, d, after) => {
                let old = self.eval(place, line)?;
                let n = as_number(&old)
                    .ok_or_else(|| eval_err(line, format!("++ or -- on {}", old.type_name())))?;
                let new = Val::Num(n + d);
                self.assign(place, new.clone(), line)?;
                if *after {
                    new
                } else {
                    Val::Num(n)
                }
            }
            Expr::Bin(op, a, b) => {
                let x = self.eval(a, line)?;
                match op {
                    BinOp::And => return Ok(Val::Bool(truthy(&x) && truthy(&self.eval(b, line)?))),
                    BinOp::Or => return Ok(Val::Bool(truthy(&x) || truthy(&self.eval(b, line)?))),
                    _ => {}
                }
                let y = self.eval(b, line)?;
                self.binary(*op, x, y, line)?
            }
        })
    }

    /// `$( … )` in a string: its statements run, the values of its expressions its value.
    fn sub(&mut self, body: &[Stmt]) -> Result<Val, ScriptError> {
        let mut out = Vec::new();
        for s in body {
            match s {
                Stmt::Expr { expr, line } => {
                    self.tick(*line)?;
                    let v = self.eval(expr, *line)?;
                    if !matches!(expr, Expr::Cast(Cast::Void, _)) {
                        out.push(v);
                    }
                }
                other => {
                    if !matches!(self.statement(other)?, Flow::Normal) {
                        break;
                    }
                }
            }
        }
        Ok(match out.len() {
            0 => Val::Null,
            1 => out.pop().unwrap_or(Val::Null),
            n => {
                self.cells(n, 0)?;
                Val::List(Rc::new(RefCell::new(out)))
            }
        })
    }

    fn binary(&mut self, op: BinOp, x: Val, y: Val, line: u32) -> Result<Val, ScriptError> {
        use std::cmp::Ordering::*;
        Ok(match op {
            BinOp::Cmp(o) => {
                let ord = compare(&x, &y);
                Val::Bool(match o {
                    Operator::Eq => ord == Some(Equal),
                    Operator::Gt => ord == Some(Greater),
                    Operator::Ge => matches!(ord, Some(Greater | Equal)),
                    Operator::Lt => ord == Some(Less),
                    Operator::Le => matches!(ord, Some(Less | Equal)),
                })
            }
            BinOp::Ne => Val::Bool(compare(&x, &y) != Some(Equal)),
            BinOp::And => Val::Bool(truthy(&x) && truthy(&y)),
            BinOp::Or => Val::Bool(truthy(&x) || truthy(&y)),
            BinOp::Like(not) => Val::Bool(like(&display(&x), &display(&y)) != not),
            BinOp::Contains(not) => {
                let found = elements(&x).iter().any(|e| compare(e, &y) == Some(Equal));
                Val::Bool(found != not)
            }
            BinOp::Replace => {
                let args = elements(&y);
                let Some(pattern) = args.first() else {
                    return Err(eval_err(line, "-replace without a pattern"));
                };
                let re = regex(&display(pattern), line)?;
                let with = args.get(1).map(display).unwrap_or_default();
                let r = re.replace_all(&display(&x), with.as_str()).into_owned();
                self.string(r, line)?
            }
            BinOp::Match(not) => {
                let re = regex(&display(&y), line)?;
                let text = display(&x);
                let found = match re.captures(&text) {
                    Some(c) => {
                        // `$Matches`: the match (key 0) and each group that matched.
                        let mut groups = Vec::new();
                        for (k, g) in c.iter().enumerate() {
                            if let Some(g) = g {
                                groups.push((k.to_string(), Val::Str(g.as_str().to_owned())));
                            }
                        }
                        self.cells(groups.len(), line)?;
                        self.vars
                            .insert("matches".into(), Val::Map(Rc::new(RefCell::new(groups))));
                        true
                    }
                    None => false,
                };
                Val::Bool(found != not)
            }
            BinOp::Add => match (&x, &y) {
                (Val::List(l), _) => {
                    let mut out = l.borrow().clone();
                    let more = elements(&y);
                    self.cells(out.len() + more.len(), line)?;
                    out.extend(more);
                    Val::List(Rc::new(RefCell::new(out)))
                }
                (Val::Str(s), _) if as_number(&x).is_none() || as_number(&y).is_none() => {
                    let s = format!("{s}{}", display(&y));
                    self.string(s, line)?
                }
                _ => Val::Num(arith(&x, &y, line, |p, q| p + q)?),
            },
            BinOp::Sub => Val::Num(arith(&x, &y, line, |p, q| p - q)?),
            BinOp::Mul => Val::Num(arith(&x, &y, line, |p, q| p * q)?),
            BinOp::Div | BinOp::Rem => {
                let q = as_number(&y).unwrap_or(f64::NAN);
                if q == 0.0 {
                    return Err(eval_err(line, "division by zero"));
                }
                if op == BinOp::Div {
                    Val::Num(arith(&x, &y, line, |p, q| p / q)?)
                } else {
                    Val::Num(arith(&x, &y, line, |p, q| p % q)?)
                }
            }
        })
    }

    fn math(&mut self, name: &str, args: &[Expr], line: u32) -> Result<Val, ScriptError> {
        let mut n = Vec::with_capacity(args.len());
        for a in args {
            n.push(self.number(a, line)?);
        }
        let x = n.first().copied().unwrap_or(0.0);
        let y = n.get(1).copied();
        let r = match name {
            "round" => {
                let d = y.unwrap_or(0.0);
                if !(0.0..=15.0).contains(&d) || d.fract() != 0.0 {
                    return Err(eval_err(line, format!("[Math]::Round with {d} digits")));
                }
                let scale = 10f64.powi(d as i32);
                (x * scale).round_ties_even() / scale
            }
            "abs" => x.abs(),
            "floor" => x.floor(),
            "ceiling" => x.ceil(),
            "truncate" => x.trunc(),
            "sqrt" => x.sqrt(),
            "min" => x.min(y.unwrap_or(x)),
            "max" => x.max(y.unwrap_or(x)),
            _ => x.powf(y.unwrap_or(1.0)),
        };
        if !r.is_finite() {
            return Err(eval_err(
                line,
                format!("[Math]::{name}: not a finite number"),
            ));
        }
        Ok(Val::Num(r))
    }

    /// A command in an expression: PAL's helpers the files call, `New-Object` of the two
    /// collections, or an unsupported command.
    fn command(
        &mut self,
        name: &str,
        args: &[(Option<String>, Expr)],
        line: u32,
    ) -> Result<Val, ScriptError> {
        let mut values = Vec::with_capacity(args.len());
        for (n, e) in args {
            values.push((n.clone(), self.eval(e, line)?));
        }
        let first = values.first().map(|(_, v)| v.clone()).unwrap_or(Val::Null);
        match name.to_ascii_lowercase().as_str() {
            "new-object" => {
                let ty = display(&first).to_ascii_lowercase();
                let ty = ty.strip_prefix("system.collections.").unwrap_or(&ty);
                match ty {
                    "arraylist" => Ok(Val::List(Rc::new(RefCell::new(Vec::new())))),
                    "hashtable" => Ok(Val::Map(Rc::new(RefCell::new(Vec::new())))),
                    _ => Err(unsupported(line, format!("New-Object {}", display(&first)))),
                }
            }
            // PAL.ps1: `IsNumeric $Value` and `$Value -gt 0`.
            "isgreaterthanzero" => Ok(Val::Bool(match &first {
                Val::Num(n) => *n > 0.0,
                Val::Str(s) => parse_number(s.trim()).is_some_and(|n| n > 0.0),
                _ => false,
            })),
            // PAL.ps1: the text between the `$` and the next `:` of `MSSQL$NAME:Object`, or ''.
            "extractsqlnamedinstancefromcounterobjectpath" => {
                let s = display(&first);
                let Some(at) = s.find('$') else {
                    return Ok(Val::Str(String::new()));
                };
                let rest = s.get(at + 1..).unwrap_or_default();
                match rest.find(':') {
                    Some(colon) => Ok(Val::Str(rest.get(..colon).unwrap_or_default().to_owned())),
                    None => Err(eval_err(
                        line,
                        format!("ExtractSqlNamedInstanceFromCounterObjectPath: no `:` after the `$` in '{s}'"),
                    )),
                }
            }
            "createalert" if self.in_slice => {
                let mut alert = CodeAlert {
                    counter: String::new(),
                    min: false,
                    avg: false,
                    max: false,
                    trend: false,
                };
                let mut instance = false;
                for (n, v) in &values {
                    let n = n.as_deref().unwrap_or_default().to_ascii_lowercase();
                    match n.as_str() {
                        "timesliceindex" => {
                            if as_number(v) != Some(0.0) {
                                return Err(eval_err(
                                    line,
                                    format!(
                                        "CreateAlert -TimeSliceIndex {} (the slice is index 0)",
                                        display(v)
                                    ),
                                ));
                            }
                        }
                        "counterinstanceobject" => {
                            let Val::Inst(i) = v else {
                                return Err(eval_err(
                                    line,
                                    format!("CreateAlert -CounterInstanceObject is {}, not a counter instance", v.type_name()),
                                ));
                            };
                            alert.counter = i.path.clone();
                            instance = true;
                        }
                        "isminthresholdbroken" => alert.min = truthy(v),
                        "isavgthresholdbroken" => alert.avg = truthy(v),
                        "ismaxthresholdbroken" => alert.max = truthy(v),
                        "istrendthresholdbroken" => alert.trend = truthy(v),
                        "isminevaluated" | "isavgevaluated" | "ismaxevaluated"
                        | "istrendevaluated" => {}
                        other => {
                            return Err(unsupported(
                                line,
                                format!("the CreateAlert parameter -{other}"),
                            ))
                        }
                    }
                }
                if !instance {
                    return Err(eval_err(line, "CreateAlert without -CounterInstanceObject"));
                }
                self.cells(1, line)?;
                self.alerts.push(alert);
                Ok(Val::Null)
            }
            _ => Err(unsupported(line, format!("the command `{name}`"))),
        }
    }

    /// `target.name(args)`.
    fn method(
        &mut self,
        target: &Val,
        name: &str,
        args: &[Val],
        line: u32,
    ) -> Result<Val, ScriptError> {
        let lower = name.to_ascii_lowercase();
        let arity = |n: std::ops::RangeInclusive<usize>| {
            if n.contains(&args.len()) {
                Ok(())
            } else {
                Err(eval_err(
                    line,
                    format!(".{name}() does not take {} arguments", args.len()),
                ))
            }
        };
        match (target, lower.as_str()) {
            (Val::List(l), "add") => {
                arity(1..=1)?;
                self.cells(1, line)?;
                let mut l = l.borrow_mut();
                l.push(args.first().cloned().unwrap_or(Val::Null));
                Ok(Val::Num((l.len() - 1) as f64))
            }
            (Val::List(l), "contains") => {
                arity(1..=1)?;
                let x = args.first().cloned().unwrap_or(Val::Null);
                let found = l
                    .borrow()
                    .iter()
                    .any(|e| compare(e, &x) == Some(std::cmp::Ordering::Equal));
                Ok(Val::Bool(found))
            }
            (Val::List(l), "clear") => {
                arity(0..=0)?;
                l.borrow_mut().clear();
                Ok(Val::Null)
            }
            (Val::Map(m), "add") => {
                arity(2..=2)?;
                let key = display(args.first().unwrap_or(&Val::Null));
                let v = args.get(1).cloned().unwrap_or(Val::Null);
                self.map_set(m, key, v, line, true)?;
                Ok(Val::Null)
            }
            (Val::Map(m), "containskey" | "contains") => {
                arity(1..=1)?;
                let key = display(args.first().unwrap_or(&Val::Null));
                Ok(Val::Bool(
                    m.borrow().iter().any(|(k, _)| k.eq_ignore_ascii_case(&key)),
                ))
            }
            (Val::Null, _) => Err(eval_err(line, format!("the method .{name}() on $null"))),
            (Val::Str(_) | Val::Num(_) | Val::Bool(_), _) => {
                self.string_method(&display(target), name, args, line)
            }
            _ => Err(unsupported(
                line,
                format!("the method .{name}() of {}", target.type_name()),
            )),
        }
    }

    /// The string methods, with .NET's rules (positions count characters; a position out of the
    /// string is an error, as .NET throws).
    fn string_method(
        &mut self,
        s: &str,
        name: &str,
        args: &[Val],
        line: u32,
    ) -> Result<Val, ScriptError> {
        let chars: Vec<char> = s.chars().collect();
        let len = chars.len() as i64;
        let text = |k: usize| args.get(k).map(display).unwrap_or_default();
        let slice = |a: i64, b: i64| -> String {
            chars
                .get(a as usize..b as usize)
                .unwrap_or_default()
                .iter()
                .collect()
        };
        let out_of_range = |what: String| {
            eval_err(
                line,
                format!(".{name}({what}) on a string of {len} characters: out of range"),
            )
        };
        let arity = |n: std::ops::RangeInclusive<usize>| {
            if n.contains(&args.len()) {
                Ok(())
            } else {
                Err(eval_err(
                    line,
                    format!(".{name}() does not take {} arguments", args.len()),
                ))
            }
        };
        let v = match name.to_ascii_lowercase().as_str() {
            "substring" => {
                arity(1..=2)?;
                let a = position(&args[0], line, name)?;
                let b = match args.get(1) {
                    Some(b) => position(b, line, name)?,
                    None => len - a,
                };
                if a < 0 || b < 0 || a > len || a + b > len {
                    let shown = if args.len() == 2 {
                        format!("{a}, {b}")
                    } else {
                        a.to_string()
                    };
                    return Err(out_of_range(shown));
                }
                Val::Str(slice(a, a + b))
            }
            "indexof" | "lastindexof" => {
                arity(1..=2)?;
                let needle: Vec<char> = text(0).chars().collect();
                let start = match args.get(1) {
                    Some(b) => position(b, line, name)?,
                    None => 0,
                };
                if start < 0 || start > len {
                    return Err(out_of_range(format!("'{}', {start}", text(0))));
                }
                let last = name.eq_ignore_ascii_case("lastindexof");
                let fits = |i: usize| chars.get(i..i + needle.len()) == Some(needle.as_slice());
                let from = start as usize;
                let found = if last {
                    (0..=chars.len()).rev().find(|&i| fits(i))
                } else {
                    (from..=chars.len()).find(|&i| fits(i))
                };
                Val::Num(found.map_or(-1.0, |i| i as f64))
            }
            "contains" => {
                arity(1..=1)?;
                Val::Bool(s.contains(&text(0)))
            }
            "startswith" => {
                arity(1..=1)?;
                Val::Bool(s.starts_with(&text(0)))
            }
            "endswith" => {
                arity(1..=1)?;
                Val::Bool(s.ends_with(&text(0)))
            }
            "replace" => {
                arity(2..=2)?;
                let from = text(0);
                if from.is_empty() {
                    return Err(eval_err(line, ".Replace() of an empty string"));
                }
                let r = s.replace(&from, &text(1));
                self.string(r, line)?
            }
            "split" => {
                arity(1..=1)?;
                let seps: Vec<char> = text(0).chars().collect();
                let parts: Vec<Val> = if seps.is_empty() {
                    s.split(char::is_whitespace)
                        .map(|p| Val::Str(p.to_owned()))
                        .collect()
                } else {
                    s.split(|c| seps.contains(&c))
                        .map(|p| Val::Str(p.to_owned()))
                        .collect()
                };
                self.cells(parts.len(), line)?;
                Val::List(Rc::new(RefCell::new(parts)))
            }
            "toupper" => {
                arity(0..=0)?;
                Val::Str(s.to_uppercase())
            }
            "tolower" => {
                arity(0..=0)?;
                Val::Str(s.to_lowercase())
            }
            "trim" | "trimstart" | "trimend" => {
                arity(0..=1)?;
                let set: Vec<char> = text(0).chars().collect();
                let strip = |c: char| {
                    if args.is_empty() {
                        c.is_whitespace()
                    } else {
                        set.contains(&c)
                    }
                };
                Val::Str(
                    match name.to_ascii_lowercase().as_str() {
                        "trim" => s.trim_matches(strip),
                        "trimstart" => s.trim_start_matches(strip),
                        _ => s.trim_end_matches(strip),
                    }
                    .to_owned(),
                )
            }
            "tostring" => {
                arity(0..=0)?;
                Val::Str(s.to_owned())
            }
            _ => return Err(unsupported(line, format!("the string method .{name}()"))),
        };
        Ok(v)
    }
}

/// An error of the code of a `$( … )` in a string (whose lines count from the string) at the
/// string's `line`.
fn at_line(e: ScriptError, line: u32) -> ScriptError {
    match e {
        ScriptError::Unsupported { what, .. } => ScriptError::Unsupported { line, what },
        ScriptError::Syntax { what, .. } => ScriptError::Syntax { line, what },
        ScriptError::Eval { what, .. } => ScriptError::Eval { line, what },
        ScriptError::Exceeded { what, .. } => ScriptError::Exceeded { line, what },
        other => other,
    }
}

/// A loop's budget error names the loop; others pass.
fn in_loop(e: ScriptError, line: u32, keyword: &str) -> ScriptError {
    match e {
        ScriptError::Exceeded { what, .. }
            if what.starts_with("more than") && what.contains("statements") =>
        {
            ScriptError::Exceeded {
                line,
                what: format!(
                    "the loop `{keyword}` did not end within {MAX_STATEMENTS} statements executed"
                ),
            }
        }
        other => other,
    }
}

fn arith(x: &Val, y: &Val, line: u32, f: impl Fn(f64, f64) -> f64) -> Result<f64, ScriptError> {
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

/// `target.name`: `.Count` / `.Length` of anything, a counter instance's properties, a hash
/// table's keys.
fn member(target: &Val, name: &str, line: u32) -> Result<Val, ScriptError> {
    let lower = name.to_ascii_lowercase();
    let one = |v: Option<f64>| -> Val {
        Val::List(Rc::new(RefCell::new(vec![v.map_or(Val::Null, Val::Num)])))
    };
    Ok(match (target, lower.as_str()) {
        (Val::Str(s), "length") => Val::Num(s.chars().count() as f64),
        (Val::List(l), "count" | "length") => Val::Num(l.borrow().len() as f64),
        (Val::Map(m), "count") => Val::Num(m.borrow().len() as f64),
        (Val::Map(m), "keys") => Val::List(Rc::new(RefCell::new(
            m.borrow()
                .iter()
                .map(|(k, _)| Val::Str(k.clone()))
                .collect(),
        ))),
        (Val::Map(m), "values") => Val::List(Rc::new(RefCell::new(
            m.borrow().iter().map(|(_, v)| v.clone()).collect(),
        ))),
        (Val::Map(m), _) => m
            .borrow()
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map_or(Val::Null, |(_, v)| v.clone()),
        (Val::Coll { count, .. }, "count") => Val::Num(*count as f64),
        (Val::Null, "count" | "length") => Val::Num(0.0),
        (Val::Num(_) | Val::Bool(_) | Val::Inst(_), "count") => Val::Num(1.0),
        (Val::Inst(i), _) => match lower.as_str() {
            "counterpath" | "name" => Val::Str(i.path.clone()),
            "countercomputer" => Val::Str(i.computer.clone()),
            "counterobject" => Val::Str(i.object.clone()),
            "countername" => Val::Str(i.counter.clone()),
            "counterinstance" => Val::Str(i.instance.clone()),
            "value" | "quantizedavg" => one(i.avg),
            "quantizedmin" => one(i.min),
            "quantizedmax" => one(i.max),
            "quantizedtrend" => one(i.trend),
            _ => {
                return Err(unsupported(
                    line,
                    format!("the property .{name} of a counter instance"),
                ))
            }
        },
        (Val::Coll { name: c, .. }, _) => {
            return Err(unsupported(
                line,
                format!("the property .{name} of ${c} {OUTSIDE_SLICE}"),
            ))
        }
        _ => {
            return Err(unsupported(
                line,
                format!("the property .{name} of {}", target.type_name()),
            ))
        }
    })
}

/// `target[index]`: an array's element (`$null` past its end, from the end when negative, as in
/// PowerShell), a hash table's value, a string's character.
fn index_of(target: &Val, index: &Val, line: u32) -> Result<Val, ScriptError> {
    Ok(match target {
        Val::List(l) => {
            let i = position(index, line, "[]")?;
            let l = l.borrow();
            let at = if i < 0 { l.len() as i64 + i } else { i };
            usize::try_from(at)
                .ok()
                .and_then(|a| l.get(a))
                .cloned()
                .unwrap_or(Val::Null)
        }
        Val::Map(m) => {
            let key = display(index);
            m.borrow()
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(&key))
                .map_or(Val::Null, |(_, v)| v.clone())
        }
        Val::Str(s) => {
            let i = position(index, line, "[]")?;
            usize::try_from(i)
                .ok()
                .and_then(|i| s.chars().nth(i))
                .map_or(Val::Null, |c| Val::Str(c.to_string()))
        }
        Val::Null => Val::Null,
        Val::Coll { name, .. } => {
            return Err(unsupported(
                line,
                format!("the counter instances of ${name} {OUTSIDE_SLICE}"),
            ))
        }
        other => {
            return Err(eval_err(
                line,
                format!("cannot index {}", other.type_name()),
            ))
        }
    })
}
