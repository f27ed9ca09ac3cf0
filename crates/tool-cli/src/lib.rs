//! What every tool's command line shares, so that the tools agree on it:
//!
//! - [`LoadFlags`]: the loader's flags (`--threads`, `--step-nvtx`), flattened into a
//!   tool's arguments and applied once by [`LoadFlags::install`], which also installs the
//!   [`progress`] bar;
//! - [`Tool::warn_unread`]: one warning per file of a rank directory that could not be
//!   read, and the [`Outcome`] it makes;
//! - [`Tool::exit`]: the exit codes. 0 when done (and when stdout was closed early, as by
//!   `| head`), 3 when some files of the input were not read, 2 with `TOOL: error` and
//!   the error's chain on stderr.

#![warn(missing_docs)]

pub mod progress;

use std::fmt::Display;
use std::num::NonZeroUsize;
use std::process::ExitCode;

/// The loader's flags, for `#[command(flatten)]` in a tool's arguments.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LoadFlags {
    /// Nsight Systems exports: the NVTX ranges whose text matches this regular expression
    /// are the steps (the step number is the first capture group when it is an integer),
    /// instead of `ProfilerStep#N` ranges. Example: --step-nvtx 'train_step (\d+)'.
    #[arg(long, value_name = "REGEX")]
    pub step_nvtx: Option<String>,

    /// Threads that split and parse each trace (default: every core); the result is the
    /// same for any number.
    #[arg(long, value_name = "N")]
    pub threads: Option<NonZeroUsize>,
}

impl LoadFlags {
    /// Applies the flags to every later load of this process and installs the progress
    /// bar; a `--step-nvtx` that is no regular expression is an error naming the flag.
    pub fn install(&self) -> anyhow::Result<()> {
        progress::install();
        if let Some(n) = self.threads {
            load::set_threads(n.get());
        }
        if let Some(re) = &self.step_nvtx {
            load::set_step_nvtx(re).map_err(|e| anyhow::anyhow!("--step-nvtx: {e}"))?;
        }
        Ok(())
    }
}

/// Whether every file of the input was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every file was read (exit 0).
    Complete,
    /// Some files of a directory could not be read; the rest were (exit 3).
    Partial,
}

impl From<()> for Outcome {
    fn from((): ()) -> Outcome {
        Outcome::Complete
    }
}

/// A tool, by the name it prefixes its messages with.
#[derive(Debug, Clone, Copy)]
pub struct Tool(pub &'static str);

impl Tool {
    /// Prints `TOOL: warning: MESSAGE` on stderr.
    pub fn warn(self, message: impl Display) {
        eprintln!("{}: warning: {message}", self.0);
    }

    /// Names each file that could not be read on stderr; [`Outcome::Partial`] if any.
    pub fn warn_unread<E: Display>(self, unread: impl IntoIterator<Item = E>) -> Outcome {
        let mut outcome = Outcome::Complete;
        for err in unread {
            self.warn(format_args!("not read: {err}"));
            outcome = Outcome::Partial;
        }
        outcome
    }

    /// The process's exit code for what the tool's run gave, printing an error first.
    pub fn exit<O: Into<Outcome>>(self, result: anyhow::Result<O>) -> ExitCode {
        match result.map(Into::into) {
            Ok(Outcome::Complete) => ExitCode::SUCCESS,
            Ok(Outcome::Partial) => ExitCode::from(3),
            Err(e) if output_file::is_broken_pipe(e.as_ref()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{}: {e:#}", self.0);
                ExitCode::from(2)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unread_files_make_a_partial_outcome() {
        let tool = Tool("test");
        assert_eq!(tool.warn_unread(Vec::<String>::new()), Outcome::Complete);
        assert_eq!(tool.warn_unread(["a.json: bad"]), Outcome::Partial);
    }

    #[test]
    fn a_closed_stdout_is_success_and_an_error_is_two() {
        let tool = Tool("test");
        assert_eq!(tool.exit(Ok(())), ExitCode::SUCCESS);
        assert_eq!(tool.exit(Ok(Outcome::Partial)), ExitCode::from(3));
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(tool.exit::<()>(Err(pipe.into())), ExitCode::SUCCESS);
        assert_eq!(
            tool.exit::<()>(Err(anyhow::anyhow!("bad"))),
            ExitCode::from(2)
        );
    }

    #[test]
    fn a_bad_step_pattern_names_the_flag() {
        let flags = LoadFlags {
            step_nvtx: Some("(".into()),
            threads: None,
        };
        let err = flags.install().expect_err("an unclosed group");
        assert!(err.to_string().starts_with("--step-nvtx: "), "{err}");
    }
}
