//! The report model: findings, sections, blocks, tables, the trust list.

use serde::{Deserialize, Serialize};

use crate::label::{Figure, NumberFormat};

/// A whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// The report's title.
    pub title: String,
    /// Lines under the title (input, tool version); plain text.
    pub subtitle: Vec<String>,
    /// The findings, most important first; shown before any section.
    pub findings: Vec<Finding>,
    /// The sections, in reading order.
    pub sections: Vec<Section>,
}

impl Document {
    /// An empty document with a title.
    pub fn new(title: impl Into<String>) -> Document {
        Document {
            title: title.into(),
            subtitle: Vec::new(),
            findings: Vec::new(),
            sections: Vec::new(),
        }
    }

    /// Every table of the document, in order.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.sections.iter().flat_map(|s| {
            s.blocks.iter().filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
        })
    }
}

/// One finding: a sentence made of text and figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The sentence, in order.
    pub spans: Vec<Span>,
}

impl Finding {
    /// A finding made of these spans.
    pub fn new(spans: Vec<Span>) -> Finding {
        Finding { spans }
    }
}

/// A section of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// An anchor: lower case, no spaces.
    pub id: String,
    /// The section's heading.
    pub title: String,
    /// Its contents, in order.
    pub blocks: Vec<Block>,
}

impl Section {
    /// An empty section with an anchor and a heading.
    pub fn new(id: impl Into<String>, title: impl Into<String>) -> Section {
        Section {
            id: id.into(),
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    /// The section with one more block.
    pub fn with(mut self, block: Block) -> Section {
        self.blocks.push(block);
        self
    }

    /// Adds a block.
    pub fn push(&mut self, block: Block) {
        self.blocks.push(block);
    }

    /// Inserts at block `at` (a length of [`Section::blocks`] taken before pushing what
    /// it introduces) the heading `head(label)`, where `label` is ` [word]` for the one
    /// label the figures of the blocks pushed since carry ([`Block::label`]), else empty:
    /// the heading's word cannot disagree with its figures.
    pub fn insert_heading(&mut self, at: usize, head: impl FnOnce(&str) -> String) {
        let label = bracketed(Block::label(&self.blocks[at..]));
        self.blocks
            .insert(at, Block::Paragraph(vec![Span::text(head(&label))]));
    }

    /// Adds a paragraph of plain text.
    pub fn para(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Paragraph(vec![Span::text(text)]));
    }

    /// The section's table named `name`, if it has one.
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.blocks.iter().find_map(|b| match b {
            Block::Table(t) if t.name == name => Some(t),
            _ => None,
        })
    }
}

/// A piece of a section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "content", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Block {
    /// A paragraph: one sentence or more.
    Paragraph(Vec<Span>),
    /// A bulleted list; each item a sentence.
    List(Vec<Vec<Span>>),
    /// A table.
    Table(Table),
    /// An SVG chart (a complete `<svg>` element) with a caption.
    Svg {
        /// The caption shown under the chart.
        caption: String,
        /// The `<svg>` element.
        svg: String,
    },
    /// The trust list: what the capture or the readers could not vouch for.
    Trust(Vec<TrustEntry>),
}

impl Block {
    /// A paragraph of these spans (in terminal text: one line).
    pub fn line(spans: Vec<Span>) -> Block {
        Block::Paragraph(spans)
    }

    /// The label word every figure of these blocks carries (paragraphs, lists, tables),
    /// where they carry one and the same.
    pub fn label(blocks: &[Block]) -> Option<&'static str> {
        let mut words = Vec::new();
        for b in blocks {
            match b {
                Block::Paragraph(s) => words.extend(span_words(s)),
                Block::List(items) => items.iter().for_each(|s| words.extend(span_words(s))),
                Block::Table(t) => words.extend(t.rows.iter().flatten().flat_map(cell_words)),
                _ => {}
            }
        }
        one_word(words.into_iter())
    }

    /// An empty paragraph (in terminal text: a blank line).
    pub fn blank() -> Block {
        Block::Paragraph(Vec::new())
    }
}

/// A sentence built piece by piece: text and figures in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpanLine(pub Vec<Span>);

impl SpanLine {
    /// Adds text.
    pub fn text(&mut self, s: impl Into<String>) -> &mut SpanLine {
        self.0.push(Span::text(s));
        self
    }

    /// Adds a figure, written in its unit's default way.
    pub fn figure(&mut self, f: Figure) -> &mut SpanLine {
        self.0.push(Span::Figure(f));
        self
    }

    /// Adds a figure that terminal text writes in `format`.
    pub fn formatted(&mut self, f: Figure, format: NumberFormat) -> &mut SpanLine {
        self.0.push(Span::Formatted(f, format));
        self
    }

    /// Closes the line with the one label its figures share, as terminal text writes it
    /// (` [measured]`): the word comes from the figures' provenance, never from the
    /// caller; nothing when the line has no figure or its figures' labels differ.
    pub fn label(&mut self) -> &mut SpanLine {
        if let Some(word) = shared_label(&self.0) {
            self.0.push(Span::text(format!(" [{word}]")));
        }
        self
    }

    /// The sentence so far as a paragraph; the line is left empty.
    pub fn take(&mut self) -> Block {
        Block::Paragraph(std::mem::take(&mut self.0))
    }
}

/// The label word every figure of `spans` carries, if they carry one and the same.
fn shared_label(spans: &[Span]) -> Option<&'static str> {
    one_word(span_words(spans))
}

/// The label word every figure of `spans` carries, if they carry one and the same: the
/// word a sentence or heading about them says.
pub fn spans_label(spans: &[Span]) -> Option<&'static str> {
    shared_label(spans)
}

/// The label words of the figures of `spans`, in order.
fn span_words(spans: &[Span]) -> impl Iterator<Item = &'static str> + '_ {
    spans.iter().filter_map(|s| match s {
        Span::Figure(f) | Span::Formatted(f, _) => Some(f.label.word()),
        _ => None,
    })
}

/// The one word of `words`, if there is at least one and they are all the same.
fn one_word(mut words: impl Iterator<Item = &'static str>) -> Option<&'static str> {
    let first = words.next()?;
    words.all(|w| w == first).then_some(first)
}

/// ` [word]` for the label `word` a heading or sentence takes from the figures it
/// introduces ([`Table::label`], [`Block::label`]); nothing without one.
pub fn bracketed(word: Option<&str>) -> String {
    word.map_or_else(String::new, |w| format!(" [{w}]"))
}

/// `(word)` after a heading, as Markdown writes a label, for the figures it introduces
/// ([`Table::label`]); nothing without one.
pub fn parenthesised(word: Option<&str>) -> String {
    word.map_or_else(String::new, |w| format!(" ({w})"))
}

/// `spans` closed by the one label their figures share ([`SpanLine::label`]).
pub fn labelled(mut spans: Vec<Span>) -> Vec<Span> {
    if let Some(word) = shared_label(&spans) {
        spans.push(Span::text(format!(" [{word}]")));
    }
    spans
}

/// Text or a figure inside a sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Span {
    /// Plain text.
    Text(String),
    /// Code or a name (kernel, op, flag), shown verbatim.
    Code(String),
    /// A labelled number.
    Figure(Figure),
    /// A labelled number that terminal text writes in `format` (other renderers as usual).
    Formatted(Figure, NumberFormat),
    /// A count of what the document itself shows (rows drawn, entries listed below, a
    /// chart's dimensions). It describes the report, not the capture, so it is no claim
    /// and carries no label; a count *of the capture* is a [`Span::Figure`].
    Tally(u64),
}

impl Span {
    /// A plain-text span.
    pub fn text(s: impl Into<String>) -> Span {
        Span::Text(s.into())
    }

    /// A code span.
    pub fn code(s: impl Into<String>) -> Span {
        Span::Code(s.into())
    }

    /// Plain text of the span, figures with their label.
    pub fn plain(&self) -> String {
        match self {
            Span::Text(s) | Span::Code(s) => s.clone(),
            Span::Figure(f) | Span::Formatted(f, _) => f.text(),
            Span::Tally(n) => tally_text(*n),
        }
    }

    /// A count of what the document shows ([`Span::Tally`]).
    pub fn tally(n: impl TryInto<u64>) -> Span {
        Span::Tally(n.try_into().unwrap_or(u64::MAX))
    }

    /// A figure span written in `format` in terminal text.
    pub fn formatted(f: Figure, format: NumberFormat) -> Span {
        Span::Formatted(f, format)
    }
}

/// A tally's digits, grouped as a count figure's are.
pub(crate) fn tally_text(n: u64) -> String {
    Figure::count(n, trace_model::Provenance::Measured).value_and_range()
}

/// A table cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Cell {
    /// Plain text.
    Text(String),
    /// Code or a name, shown verbatim.
    Code(String),
    /// A labelled number.
    Figure(Figure),
    /// Text and figures together (`12 (40.0%)`).
    Spans(Vec<Span>),
    /// Nothing.
    Empty,
}

impl Cell {
    /// A plain-text cell.
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    /// A code cell.
    pub fn code(s: impl Into<String>) -> Cell {
        Cell::Code(s.into())
    }

    /// A figure cell.
    pub fn figure(f: Figure) -> Cell {
        Cell::Figure(f)
    }
}

/// A table; `name` is also the stem of its CSV file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The table's name: its CSV file's stem and its anchor.
    pub name: String,
    /// The column headings.
    pub columns: Vec<String>,
    /// The rows, each with one cell per column.
    pub rows: Vec<Vec<Cell>>,
    /// A note under the table (definitions, what was left out): text and labelled figures.
    pub note: Option<Vec<Span>>,
    /// How the table is laid out as terminal text ([`crate::text`]); without one it is a
    /// pipe table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<TextLayout>,
}

impl Table {
    /// An empty table with these columns.
    pub fn new(name: impl Into<String>, columns: &[&str]) -> Table {
        Table {
            name: name.into(),
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            rows: Vec::new(),
            note: None,
            layout: None,
        }
    }

    /// Adds a row; it must have one cell per column.
    pub fn push(&mut self, row: Vec<Cell>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "invariant: a row of table {} has one cell per column",
            self.name
        );
        self.rows.push(row);
    }

    /// The table laid out in fixed-width columns in terminal text.
    pub fn with_layout(mut self, layout: TextLayout) -> Table {
        assert_eq!(
            layout.columns.len(),
            self.columns.len(),
            "invariant: the layout of table {} has one entry per column",
            self.name
        );
        self.layout = Some(layout);
        self
    }

    /// The table with a note under it, in words only (a note that holds a number holds it
    /// as a figure: [`Table::with_note_spans`]).
    pub fn with_note(self, note: impl Into<String>) -> Table {
        self.with_note_spans(vec![Span::text(note)])
    }

    /// The label word every figure of its cells carries (`measured`), where they carry
    /// one and the same: the word its heading says, so that it cannot disagree with them.
    pub fn label(&self) -> Option<&'static str> {
        one_word(self.rows.iter().flatten().flat_map(cell_words))
    }

    /// The table with a note under it made of text and labelled figures.
    pub fn with_note_spans(mut self, note: Vec<Span>) -> Table {
        self.note = Some(note);
        self
    }
}

/// The label words of a cell's figures.
fn cell_words(c: &Cell) -> Vec<&'static str> {
    match c {
        Cell::Figure(f) => vec![f.label.word()],
        Cell::Spans(s) => span_words(s).collect(),
        _ => Vec::new(),
    }
}

/// A table's terminal-text layout: fixed-width columns, each after a number of spaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextLayout {
    /// One per column of the table.
    pub columns: Vec<Column>,
    /// Whether the column headings are printed as the first line.
    pub header: bool,
}

impl TextLayout {
    /// A layout with a heading line.
    pub fn new(columns: Vec<Column>) -> TextLayout {
        TextLayout {
            columns,
            header: true,
        }
    }

    /// The same layout without the heading line.
    pub fn without_header(mut self) -> TextLayout {
        self.header = false;
        self
    }
}

/// One column of a [`TextLayout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// Spaces before the column (the first column's: the indentation).
    pub gap: usize,
    /// The width it is padded to (0: not padded).
    pub width: usize,
    /// Which side it is padded on.
    pub align: Align,
    /// How its figures are written, when not in their unit's default way.
    pub format: Option<NumberFormat>,
}

impl Column {
    /// A left-aligned column.
    pub fn left(gap: usize, width: usize) -> Column {
        Column {
            gap,
            width,
            align: Align::Left,
            format: None,
        }
    }

    /// A right-aligned column.
    pub fn right(gap: usize, width: usize) -> Column {
        Column {
            gap,
            width,
            align: Align::Right,
            format: None,
        }
    }

    /// The column with its figures written in `format`.
    pub fn format(mut self, format: NumberFormat) -> Column {
        self.format = Some(format);
        self
    }
}

/// Which side of a column text is aligned to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Align {
    /// Padded on the right.
    Left,
    /// Padded on the left.
    Right,
}

/// One rendered row of a trust list: a `trace_model::TrustItem` (the one trust type), its
/// words as the list shows them (who gave it first), and its count and share labelled by
/// the item's own provenance (`TrustItem::provenance`): the row invents no label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrustEntry {
    /// The item: its stable code (`activity-without-launch`), its words, its count and
    /// share.
    pub item: trace_model::TrustItem,
}

impl TrustEntry {
    /// The row of `item`.
    pub fn of_item(item: trace_model::TrustItem) -> TrustEntry {
        TrustEntry { item }
    }

    /// The item's count, labelled by its provenance, where the item counts anything.
    pub fn count(&self) -> Option<Figure> {
        self.item
            .shown_count()
            .map(|n| Figure::count(n, self.item.provenance()))
    }

    /// The item's share (of GPU time, of activities), as a percentage labelled by its
    /// provenance, where known.
    pub fn share(&self) -> Option<Figure> {
        self.item
            .share
            .map(|s| Figure::percent(100.0 * s, self.item.provenance()))
    }

    /// The item's code.
    pub fn code(&self) -> &str {
        &self.item.code
    }

    /// The item's words.
    pub fn message(&self) -> &str {
        &self.item.message
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace_model::{Nanos, Provenance};

    #[test]
    fn a_line_takes_its_label_from_its_figures() {
        let measured = Span::Figure(Figure::duration(Nanos(5), Provenance::Measured));
        let inferred = Span::Figure(Figure::duration(Nanos(5), Provenance::inferred("a rule")));
        let last = |spans: Vec<Span>| labelled(spans).last().map(Span::plain);
        assert_eq!(
            last(vec![Span::text("a "), measured.clone()]).as_deref(),
            Some(" [measured]")
        );
        assert_eq!(
            last(vec![inferred.clone(), inferred.clone()]).as_deref(),
            Some(" [inferred]")
        );
        // Labels that differ, or no figure at all: no label is written.
        assert_eq!(labelled(vec![measured.clone(), inferred]).len(), 2);
        assert_eq!(labelled(vec![Span::text("words")]).len(), 1);
        let mut line = SpanLine::default();
        line.text("x ")
            .figure(Figure::count(3, Provenance::Measured))
            .label();
        assert_eq!(
            line.0.last().map(Span::plain).as_deref(),
            Some(" [measured]")
        );
    }
}
