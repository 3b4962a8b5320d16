//! Statistics over a series of raw samples.
