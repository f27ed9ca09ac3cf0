//! What every tool's command line shares, so that the tools agree on it. A tool's `main`
//! is `TOOL.main(run)` ([`Tool::main`]): its own arguments (a clap `Parser`) and
//!
//! - [`LoadFlags`]: the loader's flags (`--threads`, `--step-nvtx`, `--process`), added after the
//!   tool's own and applied before it runs, with the [`progress`] bar;
//! - [`Tool::warn_unread`]: one warning per file of a rank directory that could not be
//!   read, and the [`Outcome`] it makes;
//! - [`MemoryBudget`]: a watchdog that ends a run whose stage outgrows its memory budget
//!   (exit 2, naming the budget and its environment variable);
//! - [`Tool::exit`]: the exit codes. 0 when done (and when stdout was closed early, as by
//!   `| head`), 3 when some files of the input were not read, 2 with `TOOL: error` and
//!   the error's chain on stderr when nothing was written, 1 for an error after an output
//!   was put in place (`output_file::outputs_committed`: e.g. stdout on a full disk after
//!   the report was written; the outputs are complete, the run is not).

#![warn(missing_docs)]

mod budget;
pub mod progress;

pub use budget::MemoryBudget;

use std::fmt::Display;
use std::num::NonZeroUsize;
use std::process::ExitCode;

use clap::{Args as _, CommandFactory, FromArgMatches};

/// The loader's flags, which [`command`] adds after a tool's own arguments.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LoadFlags {
    /// Nsight Systems exports: the NVTX ranges whose text matches this regular expression
    /// are the steps (the step number is the first capture group when it is an integer),
    /// instead of `ProfilerStep#N` ranges. Example: --step-nvtx 'train_step (\d+)'.
    #[arg(long, value_name = "REGEX")]
    pub step_nvtx: Option<String>,

    /// Files that hold several processes (an Nsight Systems export, a rocpd database):
    /// read only this one, by pid or by name (the command, or its last path component).
    /// Without it every process is a capture of its own.
    #[arg(long, value_name = "PID|NAME")]
    pub process: Option<String>,

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
        if let Some(process) = &self.process {
            if process.trim().is_empty() {
                anyhow::bail!("--process: empty; give a pid or a process name");
            }
            load::set_process(process);
        }
        Ok(())
    }
}

/// Whether every file of the input was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every file was read (exit 0).
    Complete,
    /// Some files or subdirectories of a directory could not be read (`load::find_each`,
    /// `load::LoadedEach::failed`); the rest were (exit 3).
    Partial,
}

impl From<()> for Outcome {
    fn from((): ()) -> Outcome {
        Outcome::Complete
    }
}

/// A tool's command line: its own arguments `A`, then [`LoadFlags`] (what `--help` shows;
/// for a tool's `debug_assert` test).
pub fn command<A: CommandFactory>() -> clap::Command {
    // The flags alone: augmenting the tool's command itself would also give it
    // `LoadFlags`' doc comment as its about text.
    let load = LoadFlags::augment_args(clap::Command::new("load"));
    let after = A::command().get_arguments().count();
    let flags = load.get_arguments().enumerate();
    // After the tool's own in --help too (each derive numbers its arguments from 0).
    A::command().args(flags.map(|(i, a)| a.clone().display_order(after + i)))
}

/// A tool, by the name it prefixes its messages with.
#[derive(Debug, Clone, Copy)]
pub struct Tool(pub &'static str);

impl Tool {
    /// The whole of a tool's `main`: parses the command line ([`command`]; a usage error
    /// exits 2 with clap's message, `--help` and `--version` exit 0), installs the
    /// [`LoadFlags`], runs `run` and gives its [`Tool::exit`] code.
    pub fn main<A, O>(self, run: impl FnOnce(&A) -> anyhow::Result<O>) -> ExitCode
    where
        A: CommandFactory + FromArgMatches,
        O: Into<Outcome>,
    {
        let mut cmd = command::<A>();
        let matches = cmd.get_matches_mut();
        let parsed = LoadFlags::from_arg_matches(&matches)
            .and_then(|load| Ok((load, A::from_arg_matches(&matches)?)));
        let (load, args) = match parsed {
            Ok(parsed) => parsed,
            Err(e) => e.format(&mut cmd).exit(),
        };
        self.exit(load.install().and_then(|()| run(&args)))
    }

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
                self.error_code(output_file::outputs_committed())
            }
        }
    }

    /// The exit code of a failed run that had committed `committed` outputs: 2 means
    /// nothing was written, so a failure after a commit is 1.
    pub(crate) fn error_code(self, committed: usize) -> ExitCode {
        if committed == 0 {
            ExitCode::from(2)
        } else {
            eprintln!(
                "{}: the outputs written before this error are complete and in place",
                self.0
            );
            ExitCode::from(1)
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
    fn an_error_after_a_commit_is_one_not_two() {
        let tool = Tool("test");
        assert_eq!(tool.error_code(0), ExitCode::from(2));
        assert_eq!(tool.error_code(1), ExitCode::from(1));
    }

    /// A tool's own arguments, for the tests.
    #[derive(Debug, clap::Parser)]
    #[command(name = "demo", about = "Demonstrates the shared flags.")]
    struct Demo {
        /// A capture.
        capture: std::path::PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    }

    #[test]
    fn the_loader_flags_follow_the_tools_own() {
        let cmd = command::<Demo>();
        cmd.clone().debug_assert();
        let ids: Vec<_> = cmd.get_arguments().map(|a| a.get_id().as_str()).collect();
        assert_eq!(
            ids,
            ["capture", "json", "step_nvtx", "process", "threads"],
            "{ids:?}"
        );
        let help = cmd.clone().render_help().to_string();
        assert!(help.starts_with("Demonstrates the shared flags."), "{help}");
        let at = |flag: &str| help.find(flag).unwrap_or_else(|| panic!("{flag}: {help}"));
        assert!(at("--json") < at("--step-nvtx") && at("--step-nvtx") < at("--threads"));
        assert!(at("--step-nvtx") < at("--process") && at("--process") < at("--threads"));
        let matches = cmd
            .try_get_matches_from([
                "demo",
                "--threads",
                "3",
                "t.json",
                "--json",
                "--process",
                "train.py",
            ])
            .expect("parses");
        let demo = Demo::from_arg_matches(&matches).expect("the tool's own");
        let load = LoadFlags::from_arg_matches(&matches).expect("the loader's");
        assert!(demo.json && demo.capture == std::path::Path::new("t.json"));
        assert_eq!(load.threads.map(NonZeroUsize::get), Some(3));
        assert!(load.step_nvtx.is_none());
        assert_eq!(load.process.as_deref(), Some("train.py"));
    }

    #[test]
    fn a_bad_step_pattern_names_the_flag() {
        let flags = LoadFlags {
            step_nvtx: Some("(".into()),
            process: None,
            threads: None,
        };
        let err = flags.install().expect_err("an unclosed group");
        assert!(err.to_string().starts_with("--step-nvtx: "), "{err}");
    }
}
