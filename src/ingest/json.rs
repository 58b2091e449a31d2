//! Where things are in the sidecar JSON: a shallow tree of byte spans and line numbers, so each
//! object can be deserialized on its own (every bad object reported, not only the first) and a
//! semantic error can name the line of the offending value.
//!
//! Only run on text serde_json has already accepted as JSON, but written defensively anyway: it
//! returns `None` instead of panicking, and it never recurses deeper than [`MAX_DEPTH`] (deeper
//! values are skipped iteratively).

/// Containers are built down to this depth (root object, phases, phase, work items, work item,
/// and its fields); anything deeper is one opaque value.
const MAX_DEPTH: usize = 6;

pub(super) struct Node {
    pub start: usize,
    pub end: usize,
    /// 1-based line and byte column of the value's first byte.
    pub line: u32,
    pub col: u32,
    pub body: NodeBody,
}

pub(super) enum NodeBody {
    /// Members in document order, keys decoded.
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
    Scalar,
}

impl Node {
    pub fn member(&self, key: &str) -> Option<&Node> {
        match &self.body {
            NodeBody::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, n)| n),
            _ => None,
        }
    }

    /// The line of `key`'s value, or of this value when there is no such member.
    pub fn line_of(&self, key: &str) -> u32 {
        self.member(key).map_or(self.line, |n| n.line)
    }

    pub fn elements(&self) -> Option<&[Node]> {
        match &self.body {
            NodeBody::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The line of the `i`th element of the array `key`, falling back to the member, then to this value.
    pub fn element_line(&self, key: &str, i: usize) -> u32 {
        self.member(key).and_then(|n| n.elements()).and_then(|e| e.get(i)).map_or_else(|| self.line_of(key), |n| n.line)
    }
}

/// Line starts of a text, for offset → (line, column).
pub(super) struct LineStarts {
    starts: Vec<usize>,
}

impl LineStarts {
    pub fn new(text: &str) -> LineStarts {
        let mut starts = vec![0];
        starts.extend(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1));
        LineStarts { starts }
    }

    /// 1-based line and byte column of `offset`.
    pub fn pos(&self, offset: usize) -> (u32, u32) {
        let idx = self.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = self.starts.get(idx).copied().unwrap_or(0);
        (clamp(idx + 1), clamp(offset.saturating_sub(start) + 1))
    }
}

pub(super) fn clamp(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The tree of the JSON value that makes up `text`.
pub(super) fn scan(text: &str) -> Option<Node> {
    let lines = LineStarts::new(text);
    let mut s = Scanner { text, b: text.as_bytes(), pos: 0, lines: &lines };
    s.value(0)
}

struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    lines: &'a LineStarts,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.ws();
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    fn value(&mut self, depth: usize) -> Option<Node> {
        self.ws();
        let start = self.pos;
        let body = match self.peek()? {
            b'{' if depth < MAX_DEPTH => {
                self.pos += 1;
                let mut members = Vec::new();
                self.ws();
                if self.peek()? == b'}' {
                    self.pos += 1;
                } else {
                    loop {
                        self.ws();
                        let key_start = self.pos;
                        if self.peek()? != b'"' {
                            return None;
                        }
                        self.string()?;
                        let raw = self.text.get(key_start..self.pos)?;
                        let key = serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_string());
                        self.expect(b':')?;
                        let value = self.value(depth + 1)?;
                        members.push((key, value));
                        self.ws();
                        match self.peek()? {
                            b',' => self.pos += 1,
                            b'}' => {
                                self.pos += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                NodeBody::Object(members)
            }
            b'[' if depth < MAX_DEPTH => {
                self.pos += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek()? == b']' {
                    self.pos += 1;
                } else {
                    loop {
                        items.push(self.value(depth + 1)?);
                        self.ws();
                        match self.peek()? {
                            b',' => self.pos += 1,
                            b']' => {
                                self.pos += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                NodeBody::Array(items)
            }
            _ => {
                self.skip_value()?;
                NodeBody::Scalar
            }
        };
        let (line, col) = self.lines.pos(start);
        Some(Node { start, end: self.pos, line, col, body })
    }

    /// Past one string, the cursor on its opening quote.
    fn string(&mut self) -> Option<()> {
        self.pos += 1;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Past one value of any depth, without recursion.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            self.ws();
            match self.peek()? {
                b'{' | b'[' => {
                    depth += 1;
                    self.pos += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.pos += 1;
                }
                b'"' => self.string()?,
                b',' | b':' => {
                    if depth == 0 {
                        return None;
                    }
                    self.pos += 1;
                }
                _ => {
                    let start = self.pos;
                    while self
                        .peek()
                        .is_some_and(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b',' | b':' | b']' | b'}'))
                    {
                        self.pos += 1;
                    }
                    if self.pos == start {
                        return None;
                    }
                }
            }
            if depth == 0 {
                return Some(());
            }
        }
    }
}
