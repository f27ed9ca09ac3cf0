"""Whether a trace set has an event of a category or name, as HTA 0.5.0's symbol table
answers it, for ``tracewise.hta.TraceAnalysis``: its methods on user annotations and
CUPTI counters return None or ``[]`` where HTA's symbol table has no such category.

The loader's answer is used where it has one (``HtaTrace.has_symbol``: the loader notes
the texts HTA's methods ask about); else each file's JSON text, and the file is loaded
only where its text cannot tell.
"""

from __future__ import annotations

from typing import Any, Dict, Optional


def has_category(analysis: Any, cat: str) -> bool:
    """Whether any rank's trace of ``analysis`` (a ``TraceAnalysis``) has an event of
    category (or name) ``cat``: HTA asks its symbol table, which holds both, over every
    rank it loaded. The loader's answer where it has one, else each file's text (and the
    file loaded where the text cannot tell). The answer is kept on the analysis, as HTA's
    symbol table is, and so is whether each file's text has a ``\\u`` escape."""
    from . import load

    seen = analysis.__dict__.setdefault("_categories", {})
    if cat in seen:
        return seen[cat]
    # The loader notes, for the texts HTA's methods ask about, whether some event's
    # category or name is one (`HtaTrace.has_symbol`): the files are not read again.
    native = analysis._t.has_symbol(cat)
    if native is not None:
        seen[cat] = bool(native)
        return seen[cat]
    escapes = analysis.__dict__.setdefault("_escapes", {})
    query = f"SELECT 1 AS x FROM events WHERE cat = '{cat}' OR name = '{cat}' LIMIT 1"
    found = False
    for _, path in analysis._t.files():
        # A file whose text has no `"cat"` string (and no \u escape that could spell
        # one) has no such event, and one with `"cat": "cat"` has one: only the others
        # are loaded and asked.
        state = text_holds(path, cat, escapes)
        if state is True or (state is None and load(path).sql(query).num_rows > 0):
            found = True
            break
    seen[cat] = found
    return found


def text_holds(path: str, value: str, escapes: Dict[str, bool]) -> Optional[bool]:
    """What the JSON text of the trace file ``path`` (gzip or not) says of an event with
    category or name ``value``: False when the text has no ``"value"`` as written and no
    ``\\u`` escape (which could spell it); True when it has ``"cat": "value"`` (a member
    ``cat`` of that value, as Kineto writes an event's category); else None (the file must
    be asked), as when the file cannot be read here (the caller's own read then says
    why). ``escapes`` keeps, by file, whether its text has a ``\\u`` escape (a search of
    the whole text, made once)."""
    import gzip
    import json
    import zlib

    try:
        with open(path, "rb") as f:
            data = f.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
    except (OSError, EOFError, zlib.error):
        return None
    quoted = json.dumps(value).encode()
    if quoted not in data:
        if path not in escapes:
            escapes[path] = b"\\u" in data
        return None if escapes[path] else False
    if b'"cat": ' + quoted in data or b'"cat":' + quoted in data:
        return True
    return None
