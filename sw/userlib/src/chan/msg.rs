//! A channel message: a label and up to six words, i.e. what fits in one ring item after the
//! call id.
use aring::{Item, PAYLOAD_WORDS};

/// The label of the reply a server sends for a request it could not decode (bad length).
pub const BAD_REQUEST: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Msg {
    pub label: u32,
    len: Len,
    words: [u64; PAYLOAD_WORDS],
}

/// Words in use. An enum, so that `Result<Msg, _>` and `Poll` of it keep their tags in its
/// spare values: with a tag byte of their own, rustc moved a call's output with byte-wise
/// copies at odd offsets (~400 cycles per call on the RTL). `Msg` is `repr(C)` for the same
/// reason: reordered by rustc (the length after the words), a call's output was moved as the
/// 51 bytes around the niche, a `memcpy` at an odd offset (~190 cycles per copy on the RTL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u32)]
enum Len {
    #[default]
    W0,
    W1,
    W2,
    W3,
    W4,
    W5,
    W6,
}

const _: () = assert!(PAYLOAD_WORDS == 6 && core::mem::size_of::<Option<Msg>>() == core::mem::size_of::<Msg>());

impl Len {
    fn of(n: usize) -> Option<Len> {
        [Len::W0, Len::W1, Len::W2, Len::W3, Len::W4, Len::W5, Len::W6].get(n).copied()
    }
}

impl Msg {
    /// No label, no words.
    pub const EMPTY: Msg = Msg { label: 0, len: Len::W0, words: [0; PAYLOAD_WORDS] };

    /// `None` if there are more than six words.
    pub fn new(label: u32, words: &[u64]) -> Option<Msg> {
        let len = Len::of(words.len())?;
        // Word by word over the fixed six (a copy of a variable length is a memcpy call, per
        // request and reply).
        let w = core::array::from_fn(|i| words.get(i).copied().unwrap_or(0));
        Some(Msg { label, len, words: w })
    }

    /// The first `len` of `words` (the rest zero: nothing past the length travels on), `None`
    /// if `len` is more than six. Branch-free over the fixed six words (a ring item's payload
    /// as it came, per request and reply).
    fn from_words(label: u32, len: u32, words: &[u64; PAYLOAD_WORDS]) -> Option<Msg> {
        let len = Len::of(len as usize)?;
        let n = len as u64;
        let w = core::array::from_fn(|i| words[i] & 0u64.wrapping_sub(((i as u64) < n) as u64));
        Some(Msg { label, len, words: w })
    }

    pub fn words(&self) -> &[u64] {
        &self.words[..self.len as usize]
    }

    /// The word at `i`, 0 past the end (handlers that take optional arguments).
    pub fn word(&self, i: usize) -> u64 {
        match self.words.get(i) {
            Some(&w) if i < self.len as usize => w,
            _ => 0,
        }
    }

    pub(crate) fn to_item(self, id: u64) -> Item {
        Item { id, label: self.label, len: self.len as u32, payload: self.words }
    }

    /// The message in a ring item, `None` if the peer wrote a length that does not fit.
    pub(crate) fn from_item(item: &Item) -> Option<Msg> {
        Msg::from_words(item.label, item.len, &item.payload)
    }
}
