//! [`Position`]: a line and column in a configuration file.

use std::fmt;

/// A place in a configuration file: 1-based line and column (the column
/// counts characters, not bytes), as an editor shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1, in characters.
    pub column: u32,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Turns byte offsets of one text into [`Position`]s.
///
/// Built once per file (one pass to find the line starts), then each lookup
/// is a binary search plus a count of the characters before the offset on
/// its line.
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Self { text, starts }
    }

    /// The position of byte `offset`; an offset past the end (or inside a
    /// character) is clamped to the nearest character boundary before it.
    pub(crate) fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = match self.starts.binary_search(&offset) {
            Ok(exact) => exact,
            Err(next) => next - 1,
        };
        let start = self.starts[line];
        let column = self.text[start..offset].chars().count();
        Position {
            line: saturate(line + 1),
            column: saturate(column + 1),
        }
    }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_one_based_lines_and_character_columns() {
        let text = "ab\né€x\n\nz";
        let index = LineIndex::new(text);
        assert_eq!(index.position(0), Position { line: 1, column: 1 });
        assert_eq!(index.position(2), Position { line: 1, column: 3 });
        assert_eq!(index.position(3), Position { line: 2, column: 1 });
        // "é" and "€" are 2 and 3 bytes: byte 8 is "x", the third character.
        assert_eq!(index.position(8), Position { line: 2, column: 3 });
        assert_eq!(index.position(10), Position { line: 3, column: 1 });
        assert_eq!(index.position(11), Position { line: 4, column: 1 });
        // Inside "€" and past the end: clamped, never a panic.
        assert_eq!(index.position(6), Position { line: 2, column: 2 });
        assert_eq!(index.position(99), Position { line: 4, column: 2 });
    }
}
