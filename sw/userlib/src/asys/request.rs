//! A request as it travels (`abi::asys`): label, up to 14 argument words, in one ring item or
//! two; and its reply turned back into the sync API's result.
use crate::invoke::{self, Error, Reply};
use abi::asys::{ARG_FIRST_CAP, FIRST_ITEM_ARGS, MAX_ARGS, OP_PUT_CHAR, OP_PUT_STRING};
use abi::console::PUT_STRING_MAX;
use abi::ipc::MSG_REGISTERS;
use abi::MessageInfo;
use aring::{Item, PAYLOAD_WORDS};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub label: u32,
    len: usize,
    args: [u64; MAX_ARGS],
}

impl Request {
    /// Invoke `cap` with `label`, `mrs` as MR0.. and `caps` as extra caps (the sync
    /// `invoke::invoke`'s arguments). None if it does not fit (more than 3 caps or 14 words).
    #[inline]
    pub fn invocation(cap: usize, label: usize, mrs: &[usize], caps: &[usize]) -> Option<Request> {
        if caps.len() > 3 || ARG_FIRST_CAP + caps.len() + mrs.len() > MAX_ARGS || label > u32::MAX as usize {
            return None;
        }
        let mut r = Request { label: label as u32, len: ARG_FIRST_CAP + caps.len() + mrs.len(), args: [0; MAX_ARGS] };
        r.args[0] = cap as u64;
        r.args[1] = caps.len() as u64;
        for (d, s) in r.args[ARG_FIRST_CAP..].iter_mut().zip(caps.iter().chain(mrs)) {
            *d = *s as u64;
        }
        Some(r)
    }

    /// One byte, printed with the Console cap `console` (the reply says whether the console
    /// ring took it: word 0 = 1, or 0 when it is full).
    pub fn put_char(console: usize, c: u8) -> Request {
        let mut r = Request { label: OP_PUT_CHAR, len: 2, args: [0; MAX_ARGS] };
        r.args[0] = console as u64;
        r.args[1] = c as u64;
        r
    }

    /// Up to 16 bytes with the Console cap `console` (the reply's word 0 says how many the
    /// console ring took: fewer, down to 0, when it is full).
    pub fn put_string(console: usize, bytes: &[u8]) -> Request {
        let n = bytes.len().min(PUT_STRING_MAX);
        let mut r = Request { label: OP_PUT_STRING, len: 2 + n.div_ceil(8), args: [0; MAX_ARGS] };
        r.args[0] = console as u64;
        r.args[1] = n as u64;
        for (i, b) in bytes[..n].iter().enumerate() {
            r.args[2 + i / 8] |= (*b as u64) << (8 * (i % 8));
        }
        r
    }

    /// A request of raw words (tests of the kernel's checks): `len` may claim more than given.
    pub fn raw(label: u32, len: usize, words: &[u64]) -> Request {
        let mut r = Request { label, len, args: [0; MAX_ARGS] };
        for (d, s) in r.args.iter_mut().zip(words) {
            *d = *s;
        }
        r
    }

    /// Run it the sync way (no buffer, or the buffer is unusable).
    pub fn sync(&self) -> invoke::Result<Reply> {
        let a: [usize; MAX_ARGS] = core::array::from_fn(|i| self.args[i] as usize);
        let args = &a[..self.len.min(MAX_ARGS)];
        let ok = |n: usize, v: usize| Ok(Reply { info: MessageInfo::new(0, 0, 0, n), regs: [v, 0, 0, 0] });
        // The kernel's answer without the Console cap, as the async path gives it.
        let no_cap = Error { code: abi::error::INVALID_CAPABILITY, mrs: [0; MSG_REGISTERS] };
        match self.label {
            OP_PUT_CHAR => match crate::syscall::debug_put_char(a[0], a[1] as u8) {
                usize::MAX => Err(no_cap),
                n => ok(1, n),
            },
            OP_PUT_STRING => {
                let n = a[1].min(PUT_STRING_MAX).min(self.len.saturating_sub(2) * 8);
                let bytes: [u8; PUT_STRING_MAX] = core::array::from_fn(|i| (a[2 + i / 8] >> (8 * (i % 8))) as u8);
                let mut taken = 0;
                for &b in &bytes[..n] {
                    match crate::syscall::debug_put_char(a[0], b) {
                        usize::MAX => return Err(no_cap),
                        0 => break,
                        _ => taken += 1,
                    }
                }
                ok(1, taken)
            }
            _ => {
                let ncaps = a[1];
                if args.len() < ARG_FIRST_CAP || ncaps > 3 || args.len() < ARG_FIRST_CAP + ncaps {
                    return Err(Error { code: abi::error::INVALID_ARGUMENT, mrs: [1, 0, 0, 0] });
                }
                let (caps, mrs) = args[ARG_FIRST_CAP..].split_at(ncaps);
                invoke::invoke_sync(a[0], self.label as usize, mrs, caps)
            }
        }
    }

    /// Ring items it takes.
    pub fn items(&self) -> usize {
        // A length past MAX_ARGS is refused from its first item alone (as the kernel reads it).
        if self.len > FIRST_ITEM_ARGS && self.len <= MAX_ARGS {
            2
        } else {
            1
        }
    }

    /// Its ring items for call `id` (the second only if [`Request::items`] is 2).
    pub fn to_items(&self, id: u64) -> [Item; 2] {
        let mut first = Item { id, label: self.label, len: self.len as u32, payload: [0; PAYLOAD_WORDS] };
        first.payload.copy_from_slice(&self.args[..FIRST_ITEM_ARGS]);
        let w = &self.args[FIRST_ITEM_ARGS..];
        let mut payload = [0; PAYLOAD_WORDS];
        payload.copy_from_slice(&w[2..]);
        let second = Item { id: w[0], label: w[1] as u32, len: (w[1] >> 32) as u32, payload };
        [first, second]
    }
}

/// A completed request: the reply item's label (0 or an error code) and words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub code: u32,
    pub len: u32,
    pub words: [u64; PAYLOAD_WORDS],
}

impl Completion {
    pub fn from_item(i: &Item) -> Completion {
        Completion { code: i.label, len: i.len.min(PAYLOAD_WORDS as u32), words: i.payload }
    }

    /// As the sync call would have answered (`invoke::check`).
    pub fn into_result(self) -> invoke::Result<Reply> {
        let mut regs = [0; MSG_REGISTERS];
        for (d, s) in regs.iter_mut().zip(self.words) {
            *d = s as usize;
        }
        if self.code == 0 {
            Ok(Reply { info: MessageInfo::new(0, 0, 0, self.len as usize), regs })
        } else {
            Err(Error { code: self.code as usize, mrs: regs })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_requests_take_one_item_long_ones_two() {
        let r = Request::invocation(7, abi::label::RISCV_PAGE_MAP, &[0x1000, 3, 0], &[3]).unwrap();
        assert_eq!(r.items(), 1);
        let [a, _] = r.to_items(42);
        assert_eq!((a.id, a.label as usize, a.len), (42, abi::label::RISCV_PAGE_MAP, 6));
        assert_eq!(a.payload, [7, 1, 3, 0x1000, 3, 0]);
        // Untyped_Retype: 2 + 1 cap + 6 MRs = 9 words, in two items.
        let r = Request::invocation(9, abi::label::UNTYPED_RETYPE, &[1, 2, 3, 4, 5, 6], &[2]).unwrap();
        assert_eq!(r.items(), 2);
        let [a, b] = r.to_items(1);
        assert_eq!(a.len, 9);
        assert_eq!(a.payload, [9, 1, 2, 1, 2, 3]);
        assert_eq!((b.id, b.label, b.len, b.payload[0]), (4, 5, 0, 6));
        assert!(Request::invocation(1, 1, &[0; 11], &[1, 2]).is_none());
        assert!(Request::invocation(1, 1, &[], &[1, 2, 3, 4]).is_none());
    }

    #[test]
    fn strings_pack_little_endian() {
        let r = Request::put_string(14, b"hello, async world!");
        assert_eq!(r.len, 4);
        assert_eq!((r.args[0], r.args[1]), (14, 16));
        assert_eq!(r.args[2].to_le_bytes(), *b"hello, a");
        assert_eq!(r.args[3].to_le_bytes(), *b"sync wor");
    }

    #[test]
    fn completion_is_the_sync_result() {
        let ok = Completion { code: 0, len: 1, words: [0x8000_0000, 0, 0, 0, 0, 0] }.into_result().unwrap();
        assert_eq!(ok.mr(0), 0x8000_0000);
        let e = Completion { code: 4, len: 2, words: [1, 9, 0, 0, 0, 0] }.into_result().unwrap_err();
        assert_eq!((e.code, e.mrs[..2].to_vec()), (4, vec![1, 9]));
    }
}
