//! Diagnostics: input that is odd but usable. Each kind is counted, with its first
//! occurrence as an example, so reports can show them in the trust list.

/// One kind of oddity, with how often it occurred.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable machine-readable code, e.g. `negative-duration`.
    pub code: &'static str,
    /// What it means, in a sentence.
    pub message: String,
    /// How many times it occurred.
    pub count: u64,
    /// Where it first occurred (file, event index, field).
    pub first: String,
}

/// Diagnostics in order of first occurrence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Counts one occurrence of `code`. `message` and `place` are only evaluated the first time.
    pub fn add(
        &mut self,
        code: &'static str,
        message: impl FnOnce() -> String,
        place: impl FnOnce() -> String,
    ) {
        if let Some(d) = self.items.iter_mut().find(|d| d.code == code) {
            d.count += 1;
            return;
        }
        self.items.push(Diagnostic {
            code,
            message: message(),
            count: 1,
            first: place(),
        });
    }

    /// Adds `count` occurrences at once.
    pub fn add_many(&mut self, code: &'static str, count: u64, message: String, first: String) {
        if count == 0 {
            return;
        }
        if let Some(d) = self.items.iter_mut().find(|d| d.code == code) {
            d.count += count;
            return;
        }
        self.items.push(Diagnostic {
            code,
            message,
            count,
            first,
        });
    }

    /// Every diagnostic, in order of first occurrence.
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }

    /// The diagnostic with this code, if it occurred.
    pub fn get(&self, code: &str) -> Option<&Diagnostic> {
        self.items.iter().find(|d| d.code == code)
    }

    /// How often `code` occurred (0 if never).
    pub fn count(&self, code: &str) -> u64 {
        self.get(code).map_or(0, |d| d.count)
    }

    /// Whether nothing odd was met.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many kinds of oddity were met.
    pub fn len(&self) -> usize {
        self.items.len()
    }
}
