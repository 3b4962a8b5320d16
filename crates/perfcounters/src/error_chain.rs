//! An error and its causes as one line of text.

use std::error::Error;
use std::fmt;

/// An error followed by its causes ([`Error::source`], link by link), joined by `": "`; a link
/// whose text is that of a link already written is left out (an error of another crate may display
/// its cause and also return it).
///
/// Every error of this crate displays what failed and where, and leaves the cause to
/// [`Error::source`] (crate documentation, "Errors"); this is the whole story on one line:
///
/// ```
/// use perfcounters::log::LogError;
/// use perfcounters::ErrorChain;
///
/// let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "access denied");
/// let e = LogError::io("data.blg", None, io);
/// assert_eq!(e.to_string(), "data.blg");
/// assert_eq!(ErrorChain(&e).to_string(), "data.blg: access denied");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ErrorChain<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut written: Vec<String> = Vec::new();
        let mut link = Some(self.0);
        while let Some(e) = link {
            let text = e.to_string();
            if !text.is_empty() && !written.contains(&text) {
                if !written.is_empty() {
                    f.write_str(": ")?;
                }
                f.write_str(&text)?;
                written.push(text);
            }
            link = e.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Link(&'static str, Option<Box<Link>>);

    impl fmt::Display for Link {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Link {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref().map(|l| l as &(dyn Error + 'static))
        }
    }

    fn chain(links: &[&'static str]) -> Link {
        links
            .iter()
            .rev()
            .fold(None, |cause, text| Some(Link(text, cause.map(Box::new))))
            .unwrap_or(Link("", None))
    }

    #[test]
    fn each_link_once_in_order() {
        let e = chain(&["a.csv: line 3", "bad", "worse"]);
        assert_eq!(ErrorChain(&e).to_string(), "a.csv: line 3: bad: worse");
        // A link that repeats an earlier one word for word is left out; a longer one is not.
        let e = chain(&[
            "db",
            "Error code 5: locked",
            "Error code 5: locked",
            "locked",
        ]);
        assert_eq!(
            ErrorChain(&e).to_string(),
            "db: Error code 5: locked: locked"
        );
        assert_eq!(ErrorChain(&chain(&["alone"])).to_string(), "alone");
        assert_eq!(ErrorChain(&chain(&["", "cause"])).to_string(), "cause");
    }
}
