//! Writes the synthetic fixtures (CUDA-graph trace, PP rank sets) into any directory:
//! `cargo run -p lanes --example write_fixtures -- DIR`. (`cargo xtask fixtures` writes the
//! committed copies under `testdata/lanes/` from `lanes::synth::fixture_files`.)

fn main() -> std::io::Result<()> {
    let dir = std::env::args_os()
        .nth(1)
        .map_or_else(|| std::path::PathBuf::from("."), std::path::PathBuf::from);
    for path in lanes::synth::write_fixtures(&dir)? {
        println!("{}", path.display());
    }
    Ok(())
}
