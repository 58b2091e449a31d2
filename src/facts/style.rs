//! How each closed vocabulary of the schema is drawn: the one place a renderer asks, so a wire of
//! one confidence looks the same in the text, the DOT and Mermaid graphs, the pull-request
//! summary and the HTML report.

use super::vocab::Confidence;

impl Confidence {
    /// Drawn solid: the edge is known (resolved exactly, or declared); anything else (a
    /// heuristic, nothing resolved) is drawn dashed.
    pub const fn solid(self) -> bool {
        matches!(self, Confidence::Exact | Confidence::Declared)
    }

    /// The attributes a Graphviz edge of this confidence adds.
    pub const fn dot_style(self) -> &'static str {
        if self.solid() { "" } else { ", style=dashed" }
    }

    /// The arrow of a Mermaid edge of this confidence.
    pub const fn mermaid_arrow(self) -> &'static str {
        if self.solid() { "-->" } else { "-.->" }
    }

    /// The SVG class the HTML report adds to a wire of this confidence (its stylesheet dashes it).
    pub const fn svg_class(self) -> &'static str {
        if self.solid() { "" } else { " heuristic" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declared_wire_is_drawn_as_a_found_one_everywhere() {
        for c in Confidence::ALL {
            let solid = matches!(c, Confidence::Exact | Confidence::Declared);
            assert_eq!(c.solid(), solid, "{c}");
            assert_eq!(c.dot_style().is_empty(), solid, "{c}");
            assert_eq!(c.mermaid_arrow() == "-->", solid, "{c}");
            assert_eq!(c.svg_class().is_empty(), solid, "{c}");
        }
    }
}
