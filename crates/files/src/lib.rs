//! The file-system rules for everything diskmeter writes or reads that is not a test target.
//!
//! - [`output`]: results, reports, traces, bad-block lists, recordings and state are written to a
//!   temporary file in the destination's directory and renamed into place only on success. A path
//!   that is not a regular file is refused, and an existing file is replaced only when it is
//!   diskmeter's own (or the user says `--force`): nothing the user owns is truncated or deleted.
//! - [`input`]: files diskmeter reads (results, job files, traces) must be regular files; the ones
//!   read whole have a size cap.
//! - [`path`]: what is wrong with a path before anything is opened (too long, a trailing `/`, a
//!   dangling symlink, a symlink loop), as one usage error.
//! - [`lock`]: an exclusive lock on a test file or device, so two runs never measure each other.

mod error;
pub mod input;
pub mod lock;
mod mark;
pub mod output;
pub mod path;

pub use error::FileError;
pub use mark::{is_ours, set_output_mark};
