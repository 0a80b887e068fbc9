//! Kernel-object invocations: seL4_Call on the object's cap with the invocation label in the
//! message info, arguments in MRs and extra caps in the IPC buffer. The reply's label is 0 on
//! success or an `abi::error` code with the details in its MRs.
use crate::ipc;
use abi::error as e;
use abi::ipc::MSG_REGISTERS;
use abi::MessageInfo;
use core::fmt;

/// A failed invocation: the seL4 error code (`abi::error`) and the reply's first MRs, which
/// carry the details (RangeError: min, max; FailedLookup: was-source, lookup-failure type + 1
/// ... see [`lookup_failure`]; InvalidArgument/InvalidCapability: which one; NotEnoughMemory:
/// bytes left).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    pub code: usize,
    pub mrs: [usize; MSG_REGISTERS],
}

impl Error {
    pub const fn name(&self) -> &'static str {
        error_name(self.code)
    }
}

pub const fn error_name(code: usize) -> &'static str {
    match code {
        e::NO_ERROR => "NoError",
        e::INVALID_ARGUMENT => "InvalidArgument",
        e::INVALID_CAPABILITY => "InvalidCapability",
        e::ILLEGAL_OPERATION => "IllegalOperation",
        e::RANGE_ERROR => "RangeError",
        e::ALIGNMENT_ERROR => "AlignmentError",
        e::FAILED_LOOKUP => "FailedLookup",
        e::TRUNCATED_MESSAGE => "TruncatedMessage",
        e::DELETE_FIRST => "DeleteFirst",
        e::REVOKE_FIRST => "RevokeFirst",
        e::NOT_ENOUGH_MEMORY => "NotEnoughMemory",
        _ => "unknown error",
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} ({}) mrs {:#x?}", self.name(), self.code, self.mrs)
    }
}

pub type Result<T> = core::result::Result<T, Error>;

/// seL4's lookup-failure types as they appear in a FailedLookup error (MR1) or a cap fault:
/// seL4 stores `type + 1`, so these are the values seen in the MR.
pub mod lookup_failure {
    pub const INVALID_ROOT: usize = 1;
    pub const MISSING_CAPABILITY: usize = 2;
    pub const DEPTH_MISMATCH: usize = 3;
    pub const GUARD_MISMATCH: usize = 4;
}

/// seL4_CapRights_t words: bit0 write, bit1 read, bit2 grant, bit3 grant-reply.
pub mod rights {
    pub const NONE: usize = 0;
    pub const WRITE: usize = 1;
    pub const READ: usize = 2;
    pub const GRANT: usize = 4;
    pub const GRANT_REPLY: usize = 8;
    pub const READ_WRITE: usize = READ | WRITE;
    pub const ALL: usize = WRITE | READ | GRANT | GRANT_REPLY;
}

/// seL4_RISCV_VMAttributes.
pub mod vm_attr {
    pub const DEFAULT: usize = 0;
    pub const EXECUTE_NEVER: usize = 1;
}

/// seL4_CNode_CapData: the data word of Mint/Mutate/SetSpace for a CNode cap (guard size in
/// bits 5:0, guard value above).
pub const fn cnode_cap_data(guard: usize, guard_bits: usize) -> usize {
    (guard << 6) | (guard_bits & 0x3f)
}

/// The reply to a successful invocation.
#[derive(Clone, Copy, Debug)]
pub struct Reply {
    pub info: MessageInfo,
    pub regs: [usize; MSG_REGISTERS],
}

impl Reply {
    /// Return value `i` (MR i of the reply).
    pub fn mr(&self, i: usize) -> usize {
        if i < MSG_REGISTERS {
            self.regs[i]
        } else {
            ipc::get_mr(i)
        }
    }
}

/// Build the message info and register values of an invocation in `buf` (pure; host-tested).
pub fn prepare(
    buf: &mut abi::ipc::IpcBuffer,
    label: usize,
    args: &[usize],
    caps: &[usize],
) -> (MessageInfo, [usize; 4]) {
    let regs = ipc::stage(buf, args);
    let n = ipc::stage_caps(buf, caps);
    (MessageInfo::new(label, 0, n, args.len()), regs)
}

/// Interpret the reply of an invocation (pure; host-tested).
pub fn check(info: MessageInfo, regs: [usize; 4]) -> Result<Reply> {
    if info.label == e::NO_ERROR {
        Ok(Reply { info, regs })
    } else {
        Err(Error { code: info.label, mrs: regs })
    }
}

/// Invoke `cap` with `label`, `args` as MR0.. and `caps` as extra caps. On a thread that
/// installed an async-syscall client (`asys::install`), an async-capable call goes through
/// its syscall buffer and this waits for the completion; otherwise it is a seL4_Call.
pub fn invoke(cap: usize, label: usize, args: &[usize], caps: &[usize]) -> Result<Reply> {
    if abi::asys::is_async(label) {
        if let (Some(s), Some(r)) = (crate::asys::current(), crate::asys::Request::invocation(cap, label, args, caps)) {
            return crate::asys::call_blocking(s, &r).into_result();
        }
    }
    invoke_sync(cap, label, args, caps)
}

/// [`invoke`] always as a seL4_Call.
pub fn invoke_sync(cap: usize, label: usize, args: &[usize], caps: &[usize]) -> Result<Reply> {
    let (info, regs) = ipc::with_buffer(|b| prepare(b, label, args, caps));
    let (_, info, regs) = crate::syscall::call(cap, info, regs);
    ipc::with_buffer(|b| ipc::unstage(b, regs));
    check(info, regs)
}

/// Invoke and discard the reply's values.
pub fn invoke0(cap: usize, label: usize, args: &[usize], caps: &[usize]) -> Result<()> {
    invoke(cap, label, args, caps).map(|_| ())
}

/// The table the typed invocations are written in: each entry names the invocation once (its
/// label, which arguments go in MRs and which are extra caps, in seL4's order, and what the
/// reply gives back) and becomes the sync function and, for an entry with a second name, its
/// async twin, a future of the same result ([`crate::asys::Op`]: through the thread's
/// syscall buffer when it installed one, else the sync way). Only labels the kernel accepts
/// in a syscall buffer (`abi::asys::is_async`) get a second name.
///
/// ```ignore
/// invocations! {
///     /// seL4_CNode_Delete.
///     fn delete / delete_async(service, index, depth) -> () = CNODE_DELETE [index, depth] [];
///     fn get_address(service) -> usize = RISCV_PAGE_GET_ADDRESS [] [] |r| r.mr(0);
/// }
/// ```
macro_rules! invocations {
    () => {};
    // An entry with an async twin.
    (
        $(#[$meta:meta])*
        fn $name:ident / $async_name:ident ($service:ident $(, $arg:ident)* $(,)?) -> $ret:ty
            = $label:ident [$($mr:ident),*] [$($cap:ident),*] $($map:expr)?;
        $($rest:tt)*
    ) => {
        $crate::invoke::invocations!(@sync $(#[$meta])* $name ($service $(, $arg)*) -> $ret
            = $label [$($mr),*] [$($cap),*] $($map)?);
        #[doc = concat!("The async form of [`", stringify!($name), "`]: a future of the same result.")]
        #[allow(clippy::too_many_arguments)]
        // Inlined, so the future is built where the caller keeps it (an async fn's state):
        // returned by value it was copied there whole, per call.
        #[inline]
        pub fn $async_name($service: usize $(, $arg: usize)*) -> $crate::asys::ops::Op<$ret> {
            let map: fn($crate::invoke::Reply) -> $ret = $crate::invoke::reply_map!($($map)?);
            $crate::asys::ops::Op::invocation($service, abi::label::$label, &[$($mr),*], &[$($cap),*], map)
        }
        $crate::invoke::invocations!($($rest)*);
    };
    // A sync-only entry.
    (
        $(#[$meta:meta])*
        fn $name:ident ($service:ident $(, $arg:ident)* $(,)?) -> $ret:ty
            = $label:ident [$($mr:ident),*] [$($cap:ident),*] $($map:expr)?;
        $($rest:tt)*
    ) => {
        $crate::invoke::invocations!(@sync $(#[$meta])* $name ($service $(, $arg)*) -> $ret
            = $label [$($mr),*] [$($cap),*] $($map)?);
        $crate::invoke::invocations!($($rest)*);
    };
    (@sync $(#[$meta:meta])* $name:ident ($service:ident $(, $arg:ident)*) -> $ret:ty
        = $label:ident [$($mr:ident),*] [$($cap:ident),*] $($map:expr)?) => {
        $(#[$meta])*
        #[allow(clippy::too_many_arguments)]
        pub fn $name($service: usize $(, $arg: usize)*) -> $crate::invoke::Result<$ret> {
            let map: fn($crate::invoke::Reply) -> $ret = $crate::invoke::reply_map!($($map)?);
            $crate::invoke::invoke($service, abi::label::$label, &[$($mr),*], &[$($cap),*]).map(map)
        }
    };
}
pub(crate) use invocations;

/// An entry's reply mapping: the one it gives, or nothing (the reply's values are dropped).
macro_rules! reply_map {
    () => {
        |_| ()
    };
    ($map:expr) => {
        $map
    };
}
pub(crate) use reply_map;

#[cfg(test)]
mod tests {
    use super::*;
    use abi::ipc::IpcBuffer;

    fn empty() -> IpcBuffer {
        IpcBuffer::zeroed()
    }

    #[test]
    fn retype_arguments_land_where_sel4_reads_them() {
        let mut b = empty();
        // Untyped_Retype(type, size_bits, root, node_index, node_depth, node_offset, num_objects)
        let (info, regs) = prepare(&mut b, abi::label::UNTYPED_RETYPE, &[2, 0, 0, 0, 20, 3], &[2]);
        assert_eq!(info, MessageInfo::new(abi::label::UNTYPED_RETYPE, 0, 1, 6));
        assert_eq!(regs, [2, 0, 0, 0]);
        assert_eq!(&b.msg[4..6], &[20, 3]);
        assert_eq!(b.caps_or_badges[0], 2);
    }

    #[test]
    fn reply_label_is_the_error() {
        assert!(check(MessageInfo::new(0, 0, 0, 1), [42, 0, 0, 0]).is_ok());
        let err = check(MessageInfo::new(e::RANGE_ERROR, 0, 0, 2), [1, 256, 0, 0]).unwrap_err();
        assert_eq!(err.code, e::RANGE_ERROR);
        assert_eq!(err.mrs[..2], [1, 256]);
        assert_eq!(err.name(), "RangeError");
    }

    #[test]
    fn cnode_cap_data_matches_sel4_layout() {
        assert_eq!(cnode_cap_data(3, 4), (3 << 6) | 4);
        assert_eq!(cnode_cap_data(0, 52), 52);
    }
}
