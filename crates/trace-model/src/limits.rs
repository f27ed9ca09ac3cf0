//! The budgets every reader of untrusted files shares beyond JSON's: the longest string
//! or name, SQLite's heap, the time a SQLite read may take, and the longest name kept
//! whole. Each is set by an environment variable and named, with that variable, in the
//! error that stops a read.

use std::time::Duration;

/// The longest string or value read, unless `TRACEWISE_MAX_EVENT_BYTES` says otherwise
/// (the same limit, and the same variable, as the JSON readers' longest event).
pub const MAX_STRING_BYTES: u64 = 256 << 20;

/// SQLite's heap while reading a database, unless `TRACEWISE_SQLITE_MEMORY` says otherwise
/// (bytes, or with a `K`, `M` or `G` suffix). The readers keep a 256 KiB page cache, so a
/// real export needs a few MB; what grows past this is a query the file made huge.
pub const SQLITE_MEMORY_BYTES: u64 = 256 << 20;

/// The time a SQLite read may take: this much, plus [`SQLITE_SECONDS_PER_MB`] for each
/// MB of the file, unless `TRACEWISE_SQLITE_SECONDS` gives a number of seconds.
pub const SQLITE_BASE_SECONDS: f64 = 5.0;

/// Seconds per MB of database file added to [`SQLITE_BASE_SECONDS`]: a quarter second, a
/// rate of 4 MB/s, several times slower than the readers read real exports.
pub const SQLITE_SECONDS_PER_MB: f64 = 0.25;

/// Names (kernels, ranges, API calls) longer than this are cut, and the cut said in a
/// diagnostic with the full length, unless `TRACEWISE_MAX_NAME_BYTES` says otherwise:
/// the longest real kernel names (C++ templates) are a few KB, and a name is copied into
/// every row and event of a text output.
pub const MAX_NAME_BYTES: u64 = 64 << 10;

/// A positive number from `var` (with an optional `K`, `M`, `G` suffix, powers of 1024),
/// else `default`.
pub fn env_bytes(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| parse_bytes(&v))
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, shift) = match text.as_bytes().last()? {
        b'k' | b'K' => (&text[..text.len() - 1], 10),
        b'm' | b'M' => (&text[..text.len() - 1], 20),
        b'g' | b'G' => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// The longest string read: `TRACEWISE_MAX_EVENT_BYTES`, else [`MAX_STRING_BYTES`].
pub fn max_string_bytes() -> u64 {
    env_bytes("TRACEWISE_MAX_EVENT_BYTES", MAX_STRING_BYTES)
}

/// SQLite's heap budget: `TRACEWISE_SQLITE_MEMORY`, else [`SQLITE_MEMORY_BYTES`].
pub fn sqlite_memory_bytes() -> u64 {
    env_bytes("TRACEWISE_SQLITE_MEMORY", SQLITE_MEMORY_BYTES)
}

/// The longest name kept whole: `TRACEWISE_MAX_NAME_BYTES`, else [`MAX_NAME_BYTES`].
pub fn max_name_bytes() -> usize {
    usize::try_from(env_bytes("TRACEWISE_MAX_NAME_BYTES", MAX_NAME_BYTES)).unwrap_or(usize::MAX)
}

/// The time budget of reading a SQLite file of `file_bytes`: `TRACEWISE_SQLITE_SECONDS`
/// when it is a positive number, else [`SQLITE_BASE_SECONDS`] plus
/// [`SQLITE_SECONDS_PER_MB`] per MB.
pub fn sqlite_time_budget(file_bytes: u64) -> Duration {
    let set = std::env::var("TRACEWISE_SQLITE_SECONDS")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0);
    let seconds = set
        .unwrap_or_else(|| SQLITE_BASE_SECONDS + SQLITE_SECONDS_PER_MB * file_bytes as f64 / 1e6);
    Duration::from_secs_f64(seconds.min(1e9))
}

/// `name` cut to at most [`max_name_bytes`] bytes in all, at a character boundary, with
/// its full length said at the end (`…[cut: 41943040 bytes]`); `None` when it is short
/// enough. A cut name is never cut again.
pub fn cut_name(name: &str) -> Option<String> {
    (name.len() > max_name_bytes()).then(|| cut_text(name, name.len()))
}

/// The beginning of a name of `full_len` bytes (`head`: at least as long as the cut keeps,
/// or all of it) cut to [`max_name_bytes`] in all with its full length said at the end:
/// for readers that hold only the beginning of a long name.
pub fn cut_text(head: &str, full_len: usize) -> String {
    let tail = format!("…[cut: {full_len} bytes]");
    let mut end = max_name_bytes().saturating_sub(tail.len()).min(head.len());
    while !head.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{tail}", &head[..end])
}

/// The most names an error or warning lists ([`names_shown`]); the rest are counted.
pub const NAMES_SHOWN: usize = 10;

/// The longest name an error or warning lists whole ([`names_shown`]).
pub const NAME_SHOWN_BYTES: usize = 200;

/// `names` as a comma-separated list for a message: the first [`NAMES_SHOWN`], each cut to
/// [`NAME_SHOWN_BYTES`] with its full length said, then `and N more`. A file's table
/// names or CSV header is input: listed whole, a crafted file made one refusal megabytes.
pub fn names_shown<S: AsRef<str>>(names: &[S]) -> String {
    let mut shown: Vec<String> = names
        .iter()
        .take(NAMES_SHOWN)
        .map(|name| {
            let name = name.as_ref();
            if name.len() <= NAME_SHOWN_BYTES {
                return name.to_owned();
            }
            let mut end = NAME_SHOWN_BYTES;
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}…[{} bytes]", &name[..end], name.len())
        })
        .collect();
    if names.len() > NAMES_SHOWN {
        shown.push(format!("and {} more", names.len() - NAMES_SHOWN));
    }
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_shown_are_few_and_short() {
        assert_eq!(names_shown(&["a", "b"]), "a, b");
        let many: Vec<String> = (0..100_000).map(|i| format!("t{i}")).collect();
        let text = names_shown(&many);
        assert!(text.ends_with("t9, and 99990 more"), "{text}");
        let long = ["x".repeat(5 << 20)];
        let text = names_shown(&long);
        assert!(
            text.len() < 300 && text.ends_with("…[5242880 bytes]"),
            "{text}"
        );
        assert_eq!(names_shown::<&str>(&[]), "");
    }

    #[test]
    fn byte_counts_read_with_suffixes() {
        assert_eq!(parse_bytes("512"), Some(512));
        assert_eq!(parse_bytes("4K"), Some(4096));
        assert_eq!(parse_bytes(" 3m "), Some(3 << 20));
        assert_eq!(parse_bytes("2G"), Some(2 << 30));
        assert_eq!(parse_bytes("x"), None);
        assert_eq!(parse_bytes("99999999999999G"), None);
    }

    #[test]
    fn the_time_budget_grows_with_the_file() {
        let small = sqlite_time_budget(0);
        let large = sqlite_time_budget(400_000_000);
        assert!(large > small, "{small:?} {large:?}");
    }

    #[test]
    fn long_names_are_cut_at_a_character_boundary() {
        assert_eq!(cut_name("short"), None);
        let long = "é".repeat(MAX_NAME_BYTES as usize);
        let cut = cut_name(&long).expect("cut");
        assert!(cut.len() <= MAX_NAME_BYTES as usize, "{}", cut.len());
        assert_eq!(cut_name(&cut), None);
        assert!(cut.ends_with(&format!("…[cut: {} bytes]", long.len())));
    }
}
