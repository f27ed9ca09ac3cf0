//! Print the HLO text of every program in an `.xplane.pb` (or of one `HloProto` file).
//!
//! `cargo run -p hlo-parser --example hlo_text -- FILE`

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: hlo_text FILE.xplane.pb | FILE.hlo.pb");
        std::process::exit(2);
    };
    let path = std::path::Path::new(&path);
    let result = if path.to_string_lossy().ends_with(".xplane.pb") {
        xplane_reader::XSpace::read(path)
            .map_err(|err| err.to_string())
            .and_then(|space| {
                for program in space.hlo_programs() {
                    let module = hlo_parser::module_from_hlo_proto(program.hlo_proto)
                        .map_err(|err| err.to_string())?;
                    println!(
                        "// {} (program {})\n{module}",
                        program.name, program.program_id
                    );
                }
                Ok(())
            })
    } else {
        std::fs::read(path)
            .map_err(|err| err.to_string())
            .and_then(|bytes| {
                hlo_parser::module_from_hlo_proto(&bytes).map_err(|err| err.to_string())
            })
            .map(|module| println!("{module}"))
    };
    if let Err(err) = result {
        eprintln!("error: {}: {err}", path.display());
        std::process::exit(2);
    }
}
