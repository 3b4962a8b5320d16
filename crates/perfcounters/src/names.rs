//! Counter name tables.
