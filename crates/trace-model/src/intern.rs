//! String interning: event names repeat millions of times, so each is stored once.

use std::fmt;
use std::num::NonZeroU32;

use crate::FastMap;

/// An interned string; resolve it with [`Interner::get`].
///
/// Stored as `index + 1` in a `NonZeroU32`, so that an `Option<StringId>` takes 4 bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StringId(NonZeroU32);

impl StringId {
    /// The string's position in its [`Interner`]; ids are only made by interning.
    pub fn index(self) -> usize {
        (self.0.get() - 1) as usize
    }
}

impl fmt::Debug for StringId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StringId").field(&self.index()).finish()
    }
}

/// Owns every interned string of a capture.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    strings: Vec<Box<str>>,
    ids: FastMap<Box<str>, StringId>,
}

impl Interner {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `s`, adding it if it is new.
    pub fn intern(&mut self, s: &str) -> StringId {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = u32::try_from(self.strings.len() + 1)
            .ok()
            .and_then(NonZeroU32::new)
            .map(StringId)
            .expect("invariant: fewer than 2^32 - 1 distinct strings");
        self.strings.push(s.into());
        self.ids.insert(s.into(), id);
        id
    }

    /// Looks a string up without interning it.
    pub fn find(&self, s: &str) -> Option<StringId> {
        self.ids.get(s).copied()
    }

    /// The text of `id`. Panics on an id from another interner that is out of range.
    pub fn get(&self, id: StringId) -> &str {
        &self.strings[id.index()]
    }

    /// How many distinct strings it holds.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Whether it holds no string.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// Every string, in the order it was first interned (the `n`-th has index `n`).
    pub fn strings(&self) -> impl ExactSizeIterator<Item = &str> {
        self.strings.iter().map(|s| &**s)
    }
}

#[cfg(test)]
mod tests {
    use super::Interner;

    #[test]
    fn strings_come_in_first_interned_order_at_their_ids() {
        let mut i = Interner::new();
        let ids = ["b", "a", "b", "c"].map(|s| i.intern(s));
        assert_eq!(i.strings().collect::<Vec<_>>(), ["b", "a", "c"]);
        for (id, s) in ids.iter().zip(["b", "a", "b", "c"]) {
            assert_eq!(i.strings().nth(id.index()), Some(s));
        }
    }
}
