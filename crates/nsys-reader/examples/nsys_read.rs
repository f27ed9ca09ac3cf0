//! Times `nsys_reader::load` on one export, and makes large exports to time it on
//! (`cargo xtask bench --nsys` runs both).
//!
//! ```text
//! nsys_read load FILE               read FILE once; print MB/s and what was read
//! nsys_read synth TEMPLATE OUT N    OUT = TEMPLATE with its activity, runtime and NVTX
//!                                   rows repeated N times, each copy later in time and
//!                                   with its own correlation ids
//! ```

use std::path::Path;
use std::time::Instant;

use rusqlite::Connection;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let res = match args.get(1).map(String::as_str) {
        Some("load") if args.len() == 3 => load(Path::new(&args[2])),
        Some("synth") if args.len() == 5 => match args[4].parse() {
            Ok(copies) => synth(Path::new(&args[2]), Path::new(&args[3]), copies),
            Err(e) => Err(format!("copies: {e}")),
        },
        _ => Err("usage: nsys_read load FILE | nsys_read synth TEMPLATE OUT COPIES".to_string()),
    };
    if let Err(e) = res {
        eprintln!("nsys_read: {e}");
        std::process::exit(2);
    }
}

fn load(path: &Path) -> Result<(), String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    let t = Instant::now();
    let processes =
        nsys_reader::load(path, &nsys_reader::Config::default()).map_err(|e| e.to_string())?;
    let secs = t.elapsed().as_secs_f64();
    let activities: usize = processes.iter().map(|p| p.capture.activities().len()).sum();
    let host_events: usize = processes
        .iter()
        .map(|p| p.capture.host_events().len())
        .sum();
    println!(
        "{:.1} MB/s ({size} bytes in {secs:.3} s): {} processes, {activities} activities, {host_events} host events",
        size as f64 / 1e6 / secs,
        processes.len()
    );
    Ok(())
}

/// The tables repeated, and their columns shifted per copy.
const TABLES: &[&str] = &[
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "NVTX_EVENTS",
];

fn synth(template: &Path, out: &Path, copies: i64) -> Result<(), String> {
    let err = |e: rusqlite::Error| e.to_string();
    std::fs::copy(template, out).map_err(|e| format!("{}: {e}", out.display()))?;
    let db = Connection::open(out).map_err(err)?;
    let max = |sql: &str| -> Result<i64, String> {
        db.query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
            .map(|v| v.unwrap_or(0))
            .map_err(err)
    };
    // Each copy starts after the template's last end and takes ids above its highest.
    let span = max("SELECT max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME")? + 1;
    let ids = max("SELECT max(correlationId) FROM CUPTI_ACTIVITY_KIND_RUNTIME")? + 1;
    db.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN")
        .map_err(err)?;
    for table in TABLES {
        let columns: Vec<String> = db
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .map_err(err)?
            .query_map([], |r| r.get(0))
            .map_err(err)?
            .collect::<Result<_, _>>()
            .map_err(err)?;
        if columns.is_empty() {
            continue;
        }
        let rows = max(&format!("SELECT max(rowid) FROM {table}"))?;
        let select: Vec<String> = columns
            .iter()
            .map(|c| match c.as_str() {
                "start" | "end" => format!("\"{c}\" + ?1 * {span}"),
                "correlationId" => format!("\"{c}\" + ?1 * {ids}"),
                _ => format!("\"{c}\""),
            })
            .collect();
        let sql = format!(
            "INSERT INTO {table} SELECT {} FROM {table} WHERE rowid <= {rows}",
            select.join(", ")
        );
        let mut insert = db.prepare(&sql).map_err(err)?;
        for copy in 1..copies {
            insert.execute([copy]).map_err(err)?;
        }
    }
    db.execute_batch("COMMIT").map_err(err)?;
    Ok(())
}
