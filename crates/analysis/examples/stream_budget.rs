//! A downstream crate's use of `analysis`: load any capture (Chrome JSON or `.json.gz`,
//! `.xplane.pb`, or a directory of ranks) and print each GPU stream's budget, busy and
//! idle, over the capture's span. `cargo run -p analysis --example stream_budget -- PATH`

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: CAPTURE")?;
    for loaded in load::load(path.as_ref())? {
        let c = &loaded.capture;
        if let Some(span) = analysis::Window::of_capture(c) {
            println!("{}: span {}", loaded.path.display(), span.span().human());
            for s in analysis::stream_budgets(c, span) {
                let (b, gpu) = (&s.budget, c.device(s.device).ordinal);
                let (busy, idle) = (b.busy().human(), b.idle.human());
                let (stream, share) = (c.stream(s.stream).ordinal, 100.0 * b.share(b.busy()));
                println!(
                    "  GPU {gpu} stream {stream:>3}: busy {busy:>10} ({share:4.1} %), idle {idle:>10}"
                );
            }
        }
    }
    Ok(())
}
