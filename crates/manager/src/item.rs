//! [`ItemKind`]: the kinds of item a server offers the catalogue.

/// What kind of item an [`Event::Skipped`](crate::Event::Skipped) or a
/// [`PinFinding`](crate::PinFinding) is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ItemKind {
    /// A tool.
    Tool,
    /// A prompt.
    Prompt,
    /// A resource (by URI).
    Resource,
}
