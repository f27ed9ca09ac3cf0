//! Side tables: values that only some events have, kept out of the event rows.

/// `(source_index, value)` pairs sorted by source index, for a value that only some events
/// have: a capture where none has it allocates nothing, and one where every event has it
/// pays what an `Option` in the row cost (16 bytes). Keyed by source index, not position,
/// so the builder's sort and filter need not move it along with the rows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SideTable<T> {
    entries: Vec<(u64, T)>,
}

impl<T> Default for SideTable<T> {
    fn default() -> Self {
        SideTable {
            entries: Vec::new(),
        }
    }
}

impl<T: Copy + Ord> SideTable<T> {
    /// Records `value` for the event with this source index (in any order; see `finish`).
    pub(crate) fn push(&mut self, source_index: u64, value: T) {
        self.entries.push((source_index, value));
    }

    /// Sorts the table, keeping one value per source index (the smallest, so that the
    /// order of pushes does not matter) and only the source indices `keep` accepts.
    pub(crate) fn finish(&mut self, keep: impl Fn(u64) -> bool) {
        self.entries.sort_unstable();
        self.entries.dedup_by_key(|&mut (index, _)| index);
        self.entries.retain(|&(index, _)| keep(index));
        self.entries.shrink_to_fit();
    }

    /// The value of the event with this source index; the table must be finished.
    pub(crate) fn get(&self, source_index: u64) -> Option<T> {
        if self.entries.is_empty() {
            return None;
        }
        self.entries
            .binary_search_by_key(&source_index, |&(index, _)| index)
            .ok()
            .map(|found| self.entries[found].1)
    }

    /// How many events have a value.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::SideTable;

    #[test]
    fn finish_sorts_dedups_and_filters() {
        let mut table = SideTable::default();
        for (index, value) in [(9, 90i64), (3, 30), (5, 51), (5, 50), (7, 70)] {
            table.push(index, value);
        }
        table.finish(|index| index != 7);
        assert_eq!(table.len(), 3);
        let got: Vec<_> = (0..10).map(|index| table.get(index)).collect();
        let none = None;
        assert_eq!(
            got,
            [
                none,
                none,
                none,
                Some(30),
                none,
                Some(50),
                none,
                none,
                none,
                Some(90)
            ]
        );
        assert_eq!(SideTable::<i64>::default().get(0), None);
    }
}
