//! The fast parser's paths for the text Kineto writes, each one load or loop where the
//! general path of `fast.rs` makes a call or a check per byte or token, and each giving
//! way to that path on any other text: event keys recognised by their words, the `": "`
//! after a key, and flat arrays (shape texts, launch sizes) passed over.

use super::{EvKey, P, digit_run};

/// The first `N` bytes of `word` as the low bytes of a little-endian word.
const fn key_word<const N: usize>(word: &[u8; N]) -> u64 {
    let mut w = 0u64;
    let mut k = 0;
    while k < N {
        w |= (word[k] as u64) << (8 * k);
        k += 1;
    }
    w
}

const KEY_PH: u64 = key_word(b"\"ph\"");
const KEY_TS: u64 = key_word(b"\"ts\"");
const KEY_ID: u64 = key_word(b"\"id\"");
const KEY_BP: u64 = key_word(b"\"bp\"");
const KEY_CAT: u64 = key_word(b"\"cat\"");
const KEY_PID: u64 = key_word(b"\"pid\"");
const KEY_TID: u64 = key_word(b"\"tid\"");
const KEY_DUR: u64 = key_word(b"\"dur\"");
const KEY_NAME: u64 = key_word(b"\"name\"");
const KEY_ARGS: u64 = key_word(b"\"args\"");

impl P<'_> {
    /// An event's key (see [`P::key_in`]).
    #[inline(always)]
    pub(super) fn event_key(&mut self) -> Option<EvKey> {
        use EvKey::*;
        if let Some(word) = self.s.get(self.i..).and_then(|r| r.first_chunk::<8>()) {
            // The keys Kineto writes, with their quotes, recognised from one load of the
            // eight bytes at the opening quote; any other text takes the loop below.
            let w = u64::from_le_bytes(*word);
            // By the key's first letter, the one key it can be, then one compare of its
            // bytes (the old match on the letter compared slices, 45 instructions a key).
            let key = match (w >> 8) as u8 {
                b'p' if w & 0xFFFF_FFFF == KEY_PH => Some((Ph, 4, KEY_PH)),
                b'p' => Some((Pid, 5, KEY_PID)),
                b't' if w & 0xFFFF_FFFF == KEY_TS => Some((Ts, 4, KEY_TS)),
                b't' => Some((Tid, 5, KEY_TID)),
                b'c' => Some((Cat, 5, KEY_CAT)),
                b'd' => Some((Dur, 5, KEY_DUR)),
                b'n' => Some((Name, 6, KEY_NAME)),
                b'a' => Some((Args, 6, KEY_ARGS)),
                b'i' => Some((Id, 4, KEY_ID)),
                b'b' => Some((Bp, 4, KEY_BP)),
                _ => None,
            }
            .filter(|&(_, len, want)| w & (u64::MAX >> (64 - 8 * len)) == want);
            if let Some((key, len, _)) = key {
                self.i += len;
                return Some(key);
            }
        }
        self.any_event_key()
    }

    /// The colon after a key, with the whitespace around it: inline, the `": "` Kineto
    /// writes followed by a value; anything else as [`P::ws`] and [`P::eat`] read it.
    #[inline(always)]
    pub(super) fn colon(&mut self) -> Option<()> {
        if let Some(&[b':', b' ', c]) = self.s.get(self.i..self.i + 3)
            && c > b' '
        {
            self.i += 2;
            return Some(());
        }
        self.ws();
        self.eat(b':')?;
        self.ws();
        Some(())
    }

    /// The end of the array at `self.i` (a `[`) when it has the shape of Kineto's shape
    /// texts and launch sizes: strings without escapes and arrays of non-negative integers
    /// without leading zeros (`[[256, 1], [], []]`, `["float", "Scalar"]`), with at most
    /// one space after a comma and none elsewhere. `None` for anything else, valid or
    /// not, which [`P::skip`]'s general loop then checks: so what this accepts is valid
    /// JSON, and its end is the general loop's.
    ///
    /// One loop over the bytes, without a call or a whitespace check per token: the
    /// general loop took about 850 instructions for a CPU op's two shape texts on
    /// param-dlrm-8rank (callgrind).
    #[inline]
    pub(super) fn flat_array_end(&self) -> Option<usize> {
        let s = self.s;
        let mut i = self.i + 1;
        let after_comma = |i: usize| if s.get(i) == Some(&b' ') { i + 1 } else { i };
        if s.get(i) == Some(&b']') {
            return Some(i + 1);
        }
        loop {
            match *s.get(i)? {
                b'"' => {
                    let k = self.string_body(i + 1)?;
                    if s[i + 1 + k] != b'"' {
                        return None;
                    }
                    i += k + 2;
                }
                b'[' => {
                    i += 1;
                    if s.get(i) == Some(&b']') {
                        i += 1;
                    } else {
                        loop {
                            let len = digit_run(s.get(i..)?);
                            if len == 0 || (s[i] == b'0' && len > 1) {
                                return None;
                            }
                            i += len;
                            match *s.get(i)? {
                                b',' => i = after_comma(i + 1),
                                b']' => {
                                    i += 1;
                                    break;
                                }
                                _ => return None,
                            }
                        }
                    }
                }
                _ => return None,
            }
            match *s.get(i)? {
                b',' => i = after_comma(i + 1),
                b']' => return Some(i + 1),
                _ => return None,
            }
        }
    }
}
