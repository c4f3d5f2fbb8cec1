//! The SSD-cache simulator behind `diskmeter cache`. Pure computation over
//! [`trace::Request`]s: no device I/O, no command-line parsing.
