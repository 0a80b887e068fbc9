//! The fixed-size message that travels through a ring: one 64-byte cache line.
use crate::RingError;

/// Payload words an item carries after its id and message info.
pub const PAYLOAD_WORDS: usize = 6;
/// Words per item (one 64-byte cache line).
pub const ITEM_WORDS: usize = 8;

/// One message: `id` names the coroutine (or request) it belongs to, `label` and `len` are the
/// message info, `payload[..len]` the data. `len` comes from the peer, so read the payload
/// through [`Item::payload`], which checks it. Word-aligned only: the ring's slots are the
/// cache lines (`layout::Slot`); a 64-byte-aligned value type made every `Option<Item>` 128
/// bytes, moved with byte-wise copies of its unaligned tail.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Item {
    pub id: u64,
    pub label: u32,
    /// Valid payload words.
    pub len: u32,
    pub payload: [u64; PAYLOAD_WORDS],
}

const _: () = assert!(core::mem::size_of::<Item>() == 64 && core::mem::align_of::<Item>() == 8);

impl Item {
    /// An item with `words` as its payload; `None` if there are more than [`PAYLOAD_WORDS`].
    pub fn new(id: u64, label: u32, words: &[u64]) -> Option<Item> {
        let mut payload = [0; PAYLOAD_WORDS];
        payload.get_mut(..words.len())?.copy_from_slice(words);
        Some(Item { id, label, len: words.len() as u32, payload })
    }

    /// The valid payload words, or [`RingError::Corrupt`] if the peer wrote a length that does
    /// not fit.
    pub fn payload(&self) -> Result<&[u64], RingError> {
        self.payload.get(..self.len as usize).ok_or(RingError::Corrupt)
    }

    /// The item as the words stored in a slot: label in the low half of word 1 (the layout a
    /// little-endian `repr(C)` copy would give, so either side may also read it as a struct).
    pub(crate) fn to_words(self) -> [u64; ITEM_WORDS] {
        let mut w = [0; ITEM_WORDS];
        w[0] = self.id;
        w[1] = self.label as u64 | (self.len as u64) << 32;
        w[2..].copy_from_slice(&self.payload);
        w
    }

    pub(crate) fn from_words(w: [u64; ITEM_WORDS]) -> Item {
        let mut payload = [0; PAYLOAD_WORDS];
        payload.copy_from_slice(&w[2..]);
        Item { id: w[0], label: w[1] as u32, len: (w[1] >> 32) as u32, payload }
    }
}
