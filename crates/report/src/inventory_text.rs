//! How `trace-info` shows an [`Inventory`]: plain text for people.

use std::fmt::Write;

use analysis::Inventory;
use trace_model::Nanos;

/// Renders the inventory as text for a terminal.
pub fn render_text(inv: &Inventory) -> String {
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(w, "{}", inv.path);
    let _ = writeln!(w, "  format      {}", inv.format);
    if let Some(p) = &inv.producer {
        let _ = writeln!(w, "  producer    {p}");
    }
    match (inv.rank, inv.world_size) {
        (Some(r), Some(n)) => {
            let _ = writeln!(w, "  rank        {r} of {n}");
        }
        (Some(r), None) => {
            let _ = writeln!(w, "  rank        {r}");
        }
        _ => {}
    }
    if let Some((s, e)) = inv.window_ns {
        let _ = writeln!(
            w,
            "  window      {} (from {} ns to {} ns on the capture's axis) [measured]",
            Nanos(e - s).human(),
            s,
            e
        );
    }
    let _ = writeln!(w);
    let _ = writeln!(w, "GPU devices: {}", inv.devices.len());
    for d in &inv.devices {
        let mut props = Vec::new();
        if let Some(cc) = &d.compute_capability {
            props.push(format!("compute capability {cc}"));
        }
        if let Some(n) = d.multiprocessors {
            props.push(format!("{n} SMs/CUs"));
        }
        if let Some(m) = d.memory_bytes {
            props.push(format!("{:.1} GiB", m as f64 / (1u64 << 30) as f64));
        }
        if let Some(k) = d.clock_khz {
            props.push(format!("{:.0} MHz", k as f64 / 1e3));
        }
        if let Some(b) = d.memory_bandwidth_gb_s {
            props.push(format!("{b:.0} GB/s memory bandwidth"));
        }
        let props = if props.is_empty() {
            String::new()
        } else {
            format!(" — {} [read: profiler metadata]", props.join(", "))
        };
        let _ = writeln!(
            w,
            "  GPU {} ({}, {}){props}",
            d.ordinal,
            d.vendor,
            d.name
                .as_deref()
                .filter(|n| !n.is_empty())
                .unwrap_or("model not recorded")
        );
        if d.streams.is_empty() {
            let _ = writeln!(w, "    no activity");
            continue;
        }
        let _ = writeln!(
            w,
            "    {:<28} {:>8} {:>8} {:>8} {:>12} {:>9}",
            "stream", "kernels", "memcpy", "memset", "busy", "launched"
        );
        for s in &d.streams {
            let label = match &s.name {
                Some(n) => n.clone(),
                None => format!("stream {}", s.ordinal),
            };
            let total = s.kernels + s.memcpys + s.memsets;
            let _ = writeln!(
                w,
                "    {:<28} {:>8} {:>8} {:>8} {:>12} {:>8.1}%",
                label,
                s.kernels,
                s.memcpys,
                s.memsets,
                Nanos(s.busy_ns).human(),
                if total == 0 {
                    0.0
                } else {
                    100.0 * s.launched as f64 / total as f64
                }
            );
        }
    }
    if inv.devices.is_empty() {
        let _ = writeln!(
            w,
            "  none: this capture holds no GPU activity (a CPU-only capture?)"
        );
    } else {
        let _ = writeln!(
            w,
            "  (counts and busy time [measured]; busy = union of activity intervals; launched = share with a host launch found by correlation id)"
        );
    }
    let _ = writeln!(w);
    let _ = writeln!(w, "Host threads: {} [measured]", inv.threads.len());
    let _ = writeln!(
        w,
        "  {:>10} {:>12} {:>9} {:>9} {:>9}  name",
        "pid", "tid", "events", "launches", "cpu ops"
    );
    for t in &inv.threads {
        let _ = writeln!(
            w,
            "  {:>10} {:>12} {:>9} {:>9} {:>9}  {}",
            // An id that is not a 64-bit integer shows as the trace wrote it.
            t.pid_text.clone().unwrap_or_else(|| t.pid.to_string()),
            t.tid_text.clone().unwrap_or_else(|| t.tid.to_string()),
            t.events,
            t.launches,
            t.cpu_ops,
            t.name.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(w);
    match (inv.steps.count, inv.steps.source) {
        (0, _) | (_, None) => {
            let _ = writeln!(
                w,
                "Steps: none found (no ProfilerStep# annotations or step markers)"
            );
        }
        (n, Some(source)) => {
            let _ = writeln!(
                w,
                "Steps: {n} from {source}; numbers {}; duration median {}, min {}, max {} [measured]",
                compact_numbers(&inv.steps.numbers),
                Nanos(inv.steps.median_ns.unwrap_or(0)).human(),
                Nanos(inv.steps.min_ns.unwrap_or(0)).human(),
                Nanos(inv.steps.max_ns.unwrap_or(0)).human(),
            );
        }
    }
    if !inv.programs.is_empty() {
        let _ = writeln!(w);
        let _ = writeln!(
            w,
            "HLO programs: {} (instructions and Python-line coverage [measured])",
            inv.programs.len()
        );
        let _ = writeln!(
            w,
            "  {:>12} {:>12} {:>14}  name",
            "program id", "instructions", "Python line"
        );
        for p in &inv.programs {
            match (p.instructions, p.with_python_line) {
                (Some(n), Some(k)) => {
                    let pct = if n == 0 {
                        0.0
                    } else {
                        100.0 * k as f64 / n as f64
                    };
                    let _ = writeln!(
                        w,
                        "  {:>12} {:>12} {:>6} ({:>4.1}%)  {}",
                        p.id, n, k, pct, p.name
                    );
                }
                _ => {
                    let _ = writeln!(
                        w,
                        "  {:>12} {:>12} {:>14}  {} (undecodable: {})",
                        p.id,
                        "-",
                        "-",
                        p.name,
                        p.error.as_deref().unwrap_or("unknown error")
                    );
                }
            }
        }
    }
    let _ = writeln!(w);
    if inv.diagnostics.is_empty() {
        let _ = writeln!(w, "Diagnostics: none");
    } else {
        let _ = writeln!(w, "Diagnostics: {}", inv.diagnostics.len());
        for d in &inv.diagnostics {
            let _ = writeln!(w, "  {:>8} × {}: {}", d.count, d.code, d.message);
            let _ = writeln!(w, "             first at {}", d.first);
        }
    }
    o
}

/// `1, 2, 3, 7` → `1–3, 7`.
fn compact_numbers(numbers: &[i64]) -> String {
    let mut sorted = numbers.to_vec();
    sorted.sort_unstable();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}–{}", sorted[i], sorted[j])
        } else {
            sorted[i].to_string()
        });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::compact_numbers;

    #[test]
    fn numbers_compact_into_ranges() {
        assert_eq!(compact_numbers(&[3, 1, 2, 7, 9, 10]), "1–3, 7, 9–10");
        assert_eq!(compact_numbers(&[]), "");
    }
}
