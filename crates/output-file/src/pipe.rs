//! Telling a closed stdout (`tool | head`) from a real error, for every tool the same way.
//!
//! Rust programs ignore `SIGPIPE`, so writing to a pipe whose reader has gone returns an
//! [`std::io::ErrorKind::BrokenPipe`] error instead of ending the process. The reader
//! asked for no more output, so a tool stops and exits 0; any other error is reported and
//! exits 2.

use std::error::Error;
use std::io;

/// Whether `err`, or any error in its [`source`](Error::source) chain, is an I/O error of
/// kind [`BrokenPipe`](io::ErrorKind::BrokenPipe): the reader of stdout closed it early.
///
/// Takes any error: an [`io::Error`] directly, an [`Error`](crate::Error) of this crate, or
/// an `anyhow::Error` (pass `err.as_ref()`) however much context was added around the
/// write that failed.
///
/// ```
/// use std::io;
///
/// let closed = io::Error::from(io::ErrorKind::BrokenPipe);
/// assert!(output_file::is_broken_pipe(&closed));
/// assert!(!output_file::is_broken_pipe(&io::Error::from(io::ErrorKind::NotFound)));
///
/// // Wrapped, as `anyhow`'s `.context(…)` or a crate's error with `#[source]` does.
/// #[derive(Debug)]
/// struct Writing(io::Error);
/// impl std::fmt::Display for Writing {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("writing the table")
///     }
/// }
/// impl std::error::Error for Writing {
///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
///         Some(&self.0)
///     }
/// }
/// assert!(output_file::is_broken_pipe(&Writing(closed)));
/// ```
pub fn is_broken_pipe(err: &(dyn Error + 'static)) -> bool {
    let mut next = Some(err);
    while let Some(e) = next {
        if e.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
        {
            return true;
        }
        next = e.source();
    }
    false
}

/// Writes `bytes` to stdout and flushes it; a closed pipe is not an error (the reader
/// asked for no more). Tools print their data with it before committing their files, so a
/// failing stdout leaves no file committed behind an exit status of 2.
pub fn print(bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut stdout = io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        res => res,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error that wraps another, as context layers do.
    #[derive(Debug)]
    struct Context(Box<dyn Error + Send + Sync + 'static>);

    impl std::fmt::Display for Context {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("context")
        }
    }

    impl Error for Context {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(self.0.as_ref())
        }
    }

    #[test]
    fn broken_pipe_is_found_at_any_depth() {
        let pipe = || io::Error::from(io::ErrorKind::BrokenPipe);
        assert!(is_broken_pipe(&pipe()));
        assert!(is_broken_pipe(&Context(Box::new(pipe()))));
        assert!(is_broken_pipe(&Context(Box::new(Context(
            Box::new(pipe())
        )))));
        // An io::Error that carries a broken pipe as its payload.
        assert!(is_broken_pipe(&io::Error::other(Context(Box::new(pipe())))));
    }

    #[test]
    fn other_errors_are_not_broken_pipes() {
        let other = io::Error::from(io::ErrorKind::PermissionDenied);
        assert!(!is_broken_pipe(&other));
        assert!(!is_broken_pipe(&Context(Box::new(other))));
        let refused = crate::Error::Refused {
            path: "x".into(),
            reason: "is a directory".into(),
        };
        assert!(!is_broken_pipe(&refused));
    }
}
