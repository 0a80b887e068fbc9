//! Check macros: each returns `Err(Fail)` from the enclosing test with file:line and a reason.

/// Fail the test unless `cond`.
macro_rules! ensure {
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            return Err($crate::env::Fail::new(file!(), line!(), format_args!($($arg)+)));
        }
    };
}

/// Fail the test unless `a == b` (both printed in hex).
macro_rules! ensure_eq {
    ($a:expr, $b:expr, $what:expr) => {{
        let (a, b) = ($a as usize, $b as usize);
        if a != b {
            return Err($crate::env::Fail::new(
                file!(),
                line!(),
                format_args!("{}: got {:#x}, expected {:#x}", $what, a, b),
            ));
        }
    }};
}

/// Unwrap an invocation result, failing the test with the seL4 error.
macro_rules! ok {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(err) => {
                return Err($crate::env::Fail::new(file!(), line!(), format_args!("{} -> {}", stringify!($e), err)))
            }
        }
    };
}

/// The invocation must fail with error `code` (`abi::error`); evaluates to the `Error`.
macro_rules! expect_err {
    ($e:expr, $code:expr) => {
        match $e {
            Ok(_) => {
                return Err($crate::env::Fail::new(
                    file!(),
                    line!(),
                    format_args!("{} succeeded, expected {}", stringify!($e), userlib::invoke::error_name($code)),
                ))
            }
            Err(err) if err.code == $code => err,
            Err(err) => {
                return Err($crate::env::Fail::new(
                    file!(),
                    line!(),
                    format_args!("{} -> {}, expected {}", stringify!($e), err, userlib::invoke::error_name($code)),
                ))
            }
        }
    };
}

/// The invocation must fail with one of the codes (where seL4 and our kernel may reasonably
/// differ in the exact code); evaluates to the `Error`.
macro_rules! expect_any_err {
    ($e:expr, $($code:expr),+) => {
        match $e {
            Ok(_) => {
                return Err($crate::env::Fail::new(file!(), line!(), format_args!("{} succeeded, expected an error", stringify!($e))))
            }
            Err(err) if [$($code),+].contains(&err.code) => err,
            Err(err) => {
                return Err($crate::env::Fail::new(file!(), line!(), format_args!("{} -> unexpected {}", stringify!($e), err)))
            }
        }
    };
}
