//! The exit code of a run that fails after an output was put in place: 1, not 2 (its own
//! process, since the count of commits is process-wide).

use std::process::ExitCode;

#[test]
fn a_failure_after_a_commit_exits_one() {
    let tool = tool_cli::Tool("test");
    assert_eq!(
        tool.exit::<()>(Err(anyhow::anyhow!("bad"))),
        ExitCode::from(2)
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let rules = output_file::Rules {
        overwrite: false,
        inputs: &[],
    };
    output_file::write(&dir.path().join("out.txt"), &rules, b"x").expect("written");
    assert_eq!(output_file::outputs_committed(), 1);
    let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
    assert_eq!(tool.exit::<()>(Err(full.into())), ExitCode::from(1));
}
