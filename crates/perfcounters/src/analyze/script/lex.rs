//! The lexer: threshold code as a list of tokens, each with its line.

use super::{parse_number, ScriptError, MAX_CODE_BYTES};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Var(String),
    Num(f64),
    Str(String),
    /// A double-quoted string with `$` in it: its text, to expand (backtick escapes resolved, a
    /// `` `$ `` kept as `\u{0}$` so that it does not expand).
    Expand(String),
    /// A bare word: a keyword, a command or a label.
    Word(String),
    /// `-eq`, `-Operator` …: a dash followed by letters.
    Dash(String),
    /// `[Int]` …
    Type(String),
    Punct(char),
    /// `::`
    Scope,
    /// `++` / `--`.
    Incr(bool),
    /// `+=`, `-=`, `*=`, `/=`, `%=`: the operator's character.
    AssignOp(char),
    Newline,
}

#[derive(Clone, Debug)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) line: u32,
}

/// Splits `code` into tokens. `;` is a line end, as a newline is; comments (`#` to the end of the
/// line) are dropped.
pub(super) fn lex(code: &str) -> Result<Vec<Token>, ScriptError> {
    if code.len() > MAX_CODE_BYTES {
        return Err(ScriptError::Limit(format!(
            "the code is {} bytes long; at most {MAX_CODE_BYTES} are read",
            code.len()
        )));
    }
    let mut lexer = Lexer {
        chars: code.chars().collect(),
        i: 0,
        line: 1,
        out: Vec::new(),
    };
    while let Some(c) = lexer.at(0) {
        match c {
            '\n' => {
                lexer.push(Tok::Newline, 1);
                lexer.line += 1;
            }
            ';' => lexer.push(Tok::Newline, 1),
            c if c.is_whitespace() => lexer.i += 1,
            '#' => lexer.comment(),
            '$' => lexer.variable()?,
            '\'' | '"' => lexer.string(c)?,
            '[' if lexer.indexes() => lexer.push(Tok::Punct('['), 1),
            '[' => lexer.type_name(),
            ':' if lexer.at(1) == Some(':') => lexer.push(Tok::Scope, 2),
            '+' if lexer.at(1) == Some('+') => lexer.push(Tok::Incr(true), 2),
            '-' if lexer.at(1) == Some('-') && lexer.indexes() => lexer.push(Tok::Incr(false), 2),
            '+' | '-' | '*' | '/' | '%' if lexer.at(1) == Some('=') => {
                lexer.push(Tok::AssignOp(c), 2)
            }
            '-' if lexer.at(1).is_some_and(|c| c.is_ascii_alphabetic()) => lexer.dash(),
            c if c.is_ascii_digit()
                || (c == '.' && lexer.at(1).is_some_and(|c| c.is_ascii_digit())) =>
            {
                lexer.number()?
            }
            c if is_word(c) => lexer.word(),
            '(' | ')' | '{' | '}' | ']' | '=' | '+' | '-' | '*' | '/' | '%' | '.' | ',' | '@'
            | '|' | '!' | '<' | '>' | '&' | '`' => lexer.push(Tok::Punct(c), 1),
            other => {
                return Err(ScriptError::Syntax {
                    line: lexer.line,
                    what: format!("unexpected character `{other}`"),
                })
            }
        }
    }
    Ok(lexer.out)
}

/// A character of a name: a letter, a digit or `_`.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The lexer's place in the code and the tokens so far. Each method reads one kind of token that
/// starts at `i`, pushes it and moves `i` past it.
struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: u32,
    out: Vec<Token>,
}

impl Lexer {
    /// The character `k` after the current one.
    fn at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    /// Pushes `tok` on the current line and steps over the `len` characters it took.
    fn push(&mut self, tok: Tok, len: usize) {
        self.out.push(Token {
            tok,
            line: self.line,
        });
        self.i += len;
    }

    /// The characters from `start` to `end`.
    fn text(&self, start: usize, end: usize) -> String {
        self.chars
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .collect()
    }

    /// The end of the run of characters from `start` that `more` accepts.
    fn run_end(&self, start: usize, more: impl Fn(char) -> bool) -> usize {
        let mut j = start;
        while self.chars.get(j).is_some_and(|&c| more(c)) {
            j += 1;
        }
        j
    }

    /// Whether `==>` and a letter stand at `j`: PAL's collection names hold it
    /// (`$CollectionOfMSExchangeDatabase==>InstancesLogGenerationCheckpointDepth`).
    fn arrow_at(&self, j: usize) -> bool {
        self.chars.get(j..j + 4).is_some_and(|w| {
            w.first() == Some(&'=')
                && w.get(1) == Some(&'=')
                && w.get(2) == Some(&'>')
                && w.get(3).is_some_and(|&c| is_word(c))
        })
    }

    /// `# …` to the end of the line (the newline stays).
    fn comment(&mut self) {
        self.i = self.run_end(self.i, |c| c != '\n');
    }

    /// `$name` (a `:` scope is part of the name, `::` is not), or the `$` of a `$( … )`
    /// subexpression, which is dropped: the parenthesis stays.
    fn variable(&mut self) -> Result<(), ScriptError> {
        let start = self.i + 1;
        let mut j = start;
        while self.chars.get(j).is_some_and(|&c| {
            is_word(c)
                || (c == ':' && j > start && self.chars.get(j + 1) != Some(&':'))
                || (c == '#' && j > start && self.chars.get(j + 1).is_some_and(|&n| is_word(n)))
                || (j > start && self.arrow_at(j))
                || (j > start + 1 && self.arrow_at(j - 1) && c == '=')
                || (j > start + 2 && self.arrow_at(j - 2) && c == '>')
        }) {
            j += 1;
        }
        if j == start {
            if self.chars.get(start) == Some(&'(') {
                self.i += 1;
                return Ok(());
            }
            return Err(ScriptError::Syntax {
                line: self.line,
                what: "a `$` without a variable name".into(),
            });
        }
        let name = self.text(start, j);
        self.push(Tok::Var(name), j - self.i);
        Ok(())
    }

    /// A string in `quote`s; a doubled quote stands for one. In double quotes, `` ` `` escapes
    /// the next character (`` `n ``, `` `t ``, `` `0 ``; any other stands for itself) and a `$`
    /// makes the string a [`Tok::Expand`], its `$( … )` read whole (quotes inside it included).
    /// A string over several lines is a token of its last line.
    fn string(&mut self, quote: char) -> Result<(), ScriptError> {
        let mut s = String::new();
        let mut expands = false;
        let mut j = self.i + 1;
        let unclosed = |line| ScriptError::Syntax {
            line,
            what: "a string without its closing quote".into(),
        };
        loop {
            let Some(&ch) = self.chars.get(j) else {
                return Err(unclosed(self.line));
            };
            if ch == quote {
                if self.chars.get(j + 1) == Some(&quote) {
                    s.push(quote);
                    j += 2;
                    continue;
                }
                j += 1;
                break;
            }
            if ch == '\n' {
                self.line += 1;
            }
            if quote == '"' && ch == '`' {
                let Some(&next) = self.chars.get(j + 1) else {
                    return Err(unclosed(self.line));
                };
                match next {
                    'n' => s.push('\n'),
                    't' => s.push('\t'),
                    'r' => s.push('\r'),
                    '0' => s.push('\0'),
                    '$' => s.push_str("\u{0}$"),
                    other => s.push(other),
                }
                j += 2;
                continue;
            }
            if quote == '"' && ch == '$' && self.chars.get(j + 1) == Some(&'(') {
                // `$( … )`: to its matching parenthesis, whatever quotes it holds.
                expands = true;
                let mut depth = 0usize;
                loop {
                    let Some(&c) = self.chars.get(j) else {
                        return Err(unclosed(self.line));
                    };
                    if c == '\n' {
                        self.line += 1;
                    }
                    s.push(c);
                    j += 1;
                    match c {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                continue;
            }
            if quote == '"' && ch == '$' {
                expands = true;
            }
            s.push(ch);
            j += 1;
        }
        let tok = if expands {
            Tok::Expand(s)
        } else {
            Tok::Str(s.replace("\u{0}$", "$"))
        };
        self.push(tok, j - self.i);
        Ok(())
    }

    /// Whether a `[` (or `--`) here follows a value with nothing between (`$a[0]`, `$x.Values[1]`,
    /// `$i--`): an index or a decrement, not a type name or a negative number.
    fn indexes(&self) -> bool {
        let glued = self
            .i
            .checked_sub(1)
            .and_then(|p| self.chars.get(p))
            .is_some_and(|c| !c.is_whitespace());
        glued
            && matches!(
                self.out.last().map(|t| &t.tok),
                Some(Tok::Var(_) | Tok::Word(_) | Tok::Str(_) | Tok::Punct(')' | ']'))
            )
    }

    /// `[Name]` or `[Dotted.Name]` as a type; any other `[` is punctuation.
    fn type_name(&mut self) {
        let start = self.i + 1;
        let j = self.run_end(start, |c| is_word(c) || c == '.');
        if j > start && self.chars.get(j) == Some(&']') {
            let name = self.text(start, j);
            self.push(Tok::Type(name), j + 1 - self.i);
        } else {
            self.push(Tok::Punct('['), 1);
        }
    }

    /// `-name`: an operator or a parameter.
    fn dash(&mut self) {
        let start = self.i + 1;
        let j = self.run_end(start, is_word);
        let name = self.text(start, j);
        self.push(Tok::Dash(name), j - self.i);
    }

    /// A number, its suffix (`KB` …) included.
    fn number(&mut self) -> Result<(), ScriptError> {
        let j = self.run_end(self.i, |c| c.is_ascii_alphanumeric() || c == '.');
        let text = self.text(self.i, j);
        match parse_number(&text) {
            Some(n) => {
                self.push(Tok::Num(n), j - self.i);
                Ok(())
            }
            None => Err(ScriptError::Syntax {
                line: self.line,
                what: format!("`{text}` is not a number"),
            }),
        }
    }

    /// A bare word (`If`, `StaticThreshold`, `Get-Item` …).
    fn word(&mut self) {
        let j = self.run_end(self.i, |c| is_word(c) || c == '-');
        let name = self.text(self.i, j);
        self.push(Tok::Word(name), j - self.i);
    }
}
