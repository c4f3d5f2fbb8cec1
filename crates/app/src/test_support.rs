//! Helpers shared by the command modules' tests.

use crate::Error;

/// The message of a usage error; panics when the options were accepted or the error is of
/// another kind.
pub fn usage_message<T>(r: Result<T, Error>) -> String {
    match r {
        Err(Error::Usage(m)) => m,
        Err(e) => panic!("not a usage error: {e:?}"),
        Ok(_) => panic!("accepted"),
    }
}

/// `base` with `change` applied: one test case's options.
pub fn changed<T>(mut base: T, change: impl FnOnce(&mut T)) -> T {
    change(&mut base);
    base
}
