//! Writes the synthetic fixtures (CUDA-graph trace, PP rank sets) into a directory:
//! `cargo run -p lanes --example write_fixtures -- DIR`, until `cargo xtask fixtures` calls
//! `lanes::synth::write_fixtures` itself.

fn main() -> std::io::Result<()> {
    let dir = std::env::args_os()
        .nth(1)
        .map_or_else(|| std::path::PathBuf::from("."), std::path::PathBuf::from);
    for path in lanes::synth::write_fixtures(&dir)? {
        println!("{}", path.display());
    }
    Ok(())
}
