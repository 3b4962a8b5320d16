//! The interpreter: walks the syntax tree with the variables given, within the statement budget,
//! and records the `StaticThreshold` calls.

use std::collections::HashMap;

use super::parse::{BinOp, Cast, Expr, Stmt};
use super::{parse_number, Operator, ScriptError, ScriptValue, StaticThreshold, MAX_STATEMENTS};

/// Runs `body` with `vars` (names compared case-insensitively) and returns the `StaticThreshold`
/// calls it made, in order.
pub(super) fn run(
    body: &[Stmt],
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
    env.run(body)?;
    Ok(env.calls)
}

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
