//! The pieces of a trace's read: what the parsing threads make of each piece of the file
//! ([`PieceSink`]), and how the main thread adds them, in file order, to the trace being
//! read ([`Reading::add`]).

use super::*;

/// The room a piece's held texts get when the first is kept ([`PieceSink`]).
const PIECE_TEXTS: usize = 1 << 20;

/// What becomes of an event's text, `len` bytes long, when its piece is added to the
/// trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PieceText {
    /// Stored in the arena's chunks.
    Held { len: usize },
    /// Stored in a box of its own (a text that is rewritten in place).
    Own { len: usize },
    /// Left in the file: only its event index and length are kept.
    Input { len: usize },
}

/// The events of one piece of the file, made on the reading thread that parsed it: the
/// records, what to do with each text, and the texts to keep, end to end.
#[derive(Debug, Default)]
pub(super) struct Piece {
    events: Vec<(Event, PieceText)>,
    /// The held and owned texts, in event order.
    texts: String,
    /// Each event's byte offset in the JSON text (for a read that may leave texts in the
    /// file).
    offsets: Vec<u64>,
    /// Largest JSON-integer `tid` of the piece.
    max_int_tid: Option<i64>,
}

/// The [`chrome_reader::EventSink`] of a trace's read: each piece of the file is parsed into
/// a [`Piece`] on a thread of its own.
pub(super) struct PieceSink {
    pub(super) hold: Hold,
    pub(super) piece: Piece,
}

impl chrome_reader::EventSink for PieceSink {
    type Out = Piece;

    fn event(&mut self, ev: RawEvent<'_, &str>) -> Result<(), chrome_reader::Error> {
        let piece = &mut self.piece;
        if let Some(Id::Int(t)) = ev.tid {
            piece.max_int_tid = Some(piece.max_int_tid.map_or(t, |m| m.max(t)));
        }
        let (event, text) = Event::from_raw(&ev, self.hold);
        if !matches!(text, PieceText::Input { .. }) {
            if piece.texts.capacity() == 0 {
                // Room for a piece's text at once (the reader's stream chunks are 1 MiB):
                // grown from empty, its copies at each doubling were a fifth of a
                // compaction's page faults. Untouched room costs no memory, and the
                // string becomes the arena's chunk as it is (`Arena::adopt`).
                piece.texts.reserve(PIECE_TEXTS);
            }
            piece.texts.push_str(ev.json);
        }
        piece.events.push((event, text));
        if self.hold == Hold::Touched {
            piece.offsets.push(ev.offset);
        }
        Ok(())
    }

    fn finish(self) -> Piece {
        self.piece
    }
}

/// Where the held texts of a piece being added are.
enum PieceTexts {
    /// In the arena's chunk of that index ([`Arena::adopt`]).
    Adopted(usize),
    /// In the piece's own string, copied into the arena text by text.
    Kept(String),
}

/// A trace being read: the pieces so far, added in file order.
pub(super) struct Reading {
    pub(super) hold: Hold,
    pub(super) events: Vec<Event>,
    pub(super) arena: Arena,
    pub(super) max_int_tid: Option<i64>,
    /// Each event's byte offset in the JSON text, when texts may stay in the file.
    pub(super) offsets: Vec<u64>,
    pub(super) texts_in_file: bool,
}

impl Reading {
    /// Adds the events of `piece`, the next in file order: its texts go to the arena, or
    /// stay in the file.
    pub(super) fn add(&mut self, piece: Piece, path: &Path) -> Result<(), Error> {
        // The index of its first event.
        let base = self.events.len();
        if let Some(t) = piece.max_int_tid {
            self.max_int_tid = Some(self.max_int_tid.map_or(t, |m| m.max(t)));
        }
        if self.hold == Hold::Touched {
            self.offsets.extend_from_slice(&piece.offsets);
        }
        self.events.reserve(piece.events.len());
        // The piece's texts become a chunk of the arena as they are, when they can.
        let texts = match self.arena.adopt(piece.texts) {
            Ok(chunk) => PieceTexts::Adopted(chunk),
            Err(texts) => PieceTexts::Kept(texts),
        };
        let mut held = 0;
        for (i, (event, text)) in piece.events.into_iter().enumerate() {
            let text = match text {
                PieceText::Input { len } => {
                    let place = Text::input(base + i, len).ok_or_else(|| Error::TooLarge {
                        path: path.to_path_buf(),
                        what: "more than 2^32 events",
                    })?;
                    self.texts_in_file = true;
                    place
                }
                PieceText::Held { len } | PieceText::Own { len } => {
                    held += len;
                    let at = held - len;
                    let own = matches!(text, PieceText::Own { .. });
                    match &texts {
                        PieceTexts::Adopted(chunk) => {
                            match self.arena.span_at(*chunk, at, len).filter(|_| !own) {
                                Some(span) => span,
                                None => {
                                    let kept = Box::from(self.arena.span_text(*chunk, at, len));
                                    self.arena.own(kept)
                                }
                            }
                        }
                        PieceTexts::Kept(texts) if own => {
                            self.arena.own(Box::from(&texts[at..held]))
                        }
                        PieceTexts::Kept(texts) => self.arena.store(&texts[at..held]),
                    }
                }
            };
            self.events.push(event.with_text(text));
        }
        Ok(())
    }
}
