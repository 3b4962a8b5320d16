//! The vendored chart library, embedded once for every page that draws charts: the live chart of
//! `serve` and the report of `analyze`.
//!
//! [uPlot](https://github.com/leeoniya/uPlot) 1.6.32 (MIT), from its npm package
//! (`dist/uPlot.iife.min.js`, `dist/uPlot.min.css`), with its licence.

/// uPlot's script.
pub const UPLOT_JS: &str = include_str!("uPlot.iife.min.js");
/// uPlot's style sheet.
pub const UPLOT_CSS: &str = include_str!("uPlot.min.css");
/// uPlot's licence.
pub const UPLOT_LICENSE: &str = include_str!("uPlot.LICENSE");
