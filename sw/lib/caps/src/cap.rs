//! Capability values.

/// Access rights carried by endpoint, notification and frame capabilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Rights {
    pub write: bool,
    pub read: bool,
    pub grant: bool,
    pub grant_reply: bool,
}

impl Rights {
    pub const ALL: Rights = Rights { write: true, read: true, grant: true, grant_reply: true };
    pub const NONE: Rights = Rights { write: false, read: false, grant: false, grant_reply: false };

    /// seL4's `seL4_CapRights_t` word: bit0 write, bit1 read, bit2 grant, bit3 grant-reply.
    pub fn from_word(w: u64) -> Rights {
        Rights { write: w & 1 != 0, read: w & 2 != 0, grant: w & 4 != 0, grant_reply: w & 8 != 0 }
    }

    pub fn intersect(self, o: Rights) -> Rights {
        Rights {
            write: self.write && o.write,
            read: self.read && o.read,
            grant: self.grant && o.grant,
            grant_reply: self.grant_reply && o.grant_reply,
        }
    }
}

/// `repr(u8)` pins the tag to the first byte with `Null` = 0, so all-zero memory (a freshly
/// retyped CNode, a cleared slot) can only ever decode as an empty slot: with Rust's default
/// layout the tag may live in a niche of another variant's field and zeros decoded as a Frame
/// at physical address 0. Small fields come first in each variant so they share the tag's
/// word: a slot (cap + derivation links) must fit in `SLOT_BYTES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Cap {
    #[default]
    Null = 0,
    /// `free_index`: bytes already retyped from the start (the watermark). `cleared`: bytes
    /// from the start known to be zero above the watermark (a retype zeroes ahead of it, in
    /// preemptible chunks, and keeps its progress here).
    Untyped {
        size_bits: u8,
        device: bool,
        base: u64,
        free_index: u64,
        cleared: u64,
    },
    CNode {
        radix: u8,
        guard_bits: u8,
        base: u64,
        guard: u64,
    },
    Endpoint {
        rights: Rights,
        obj: u64,
        badge: u64,
    },
    /// `uintr`: the sender-table entry registered through this very cap (0: none), freed
    /// with it; an opaque kernel handle that copies do not inherit.
    Notification {
        rights: Rights,
        obj: u64,
        badge: u64,
        uintr: u64,
    },
    Tcb {
        obj: u64,
    },
    /// `mapped`: (ASID, virtual address) while the frame is mapped.
    Frame {
        size_bits: u8,
        rights: Rights,
        base: u64,
        mapped: Option<(u16, u64)>,
    },
    /// `mapped`: (ASID, virtual address) of a page table linked into a VSpace, or
    /// (ASID, [`PT_ROOT`]) for a VSpace root that owns an ASID.
    PageTable {
        base: u64,
        mapped: Option<(u16, u64)>,
    },
    IrqControl,
    IrqHandler {
        irq: u32,
    },
    AsidControl,
    /// Authority over the privileged debug calls (halt the machine, dump the scheduler with
    /// kernel addresses). Created once at boot for the root task; cannot be copied.
    DebugControl,
    /// Authority to let threads use the user-interrupt hardware's fixed pools (UINTC slots,
    /// sender tables). Created once at boot for the root task; cannot be copied.
    UintrControl,
    /// A pool of 512 ASIDs starting at `asid_base`, stored in a 4 KiB object at `base`.
    AsidPool {
        asid_base: u16,
        base: u64,
    },
    /// A U-notification sender table (`abi::object::UINTR_SENDER_TABLE`) at `base`.
    SenderTable {
        base: u64,
    },
    /// The right to reply once to thread `tcb` (non-MCS seL4: lives in the receiver's caller
    /// slot until used, saved or deleted).
    Reply {
        can_grant: bool,
        tcb: u64,
    },
    /// The authority to print on the kernel console (`abi::console`). Created once at boot
    /// for the root task; copies are its children, so revoking the original takes them back.
    Console,
}

/// `PageTable.mapped` address of a VSpace root.
pub const PT_ROOT: u64 = u64::MAX;

impl Cap {
    pub fn is_null(&self) -> bool {
        matches!(self, Cap::Null)
    }

    /// The object this cap names, as (type tag, base address), for identity comparisons.
    pub fn object(&self) -> Option<(u8, u64)> {
        Some(match *self {
            Cap::Null
            | Cap::IrqControl
            | Cap::AsidControl
            | Cap::DebugControl
            | Cap::UintrControl
            | Cap::Reply { .. } => return None,
            Cap::Untyped { base, .. } => (0, base),
            Cap::CNode { base, .. } => (4, base),
            Cap::Endpoint { obj, .. } => (2, obj),
            Cap::Notification { obj, .. } => (3, obj),
            Cap::Tcb { obj } => (1, obj),
            Cap::Frame { base, .. } => (6, base),
            Cap::PageTable { base, .. } => (8, base),
            Cap::IrqHandler { irq } => (9, irq as u64),
            Cap::AsidPool { base, .. } => (10, base),
            Cap::SenderTable { base } => (abi::object::UINTR_SENDER_TABLE as u8, base),
            // One console: every copy names it, so copies descend from the root task's.
            Cap::Console => (abi::object::CONSOLE as u8, 0),
        })
    }

    /// Memory range an object cap covers (Untyped parenthood is by containment).
    pub fn region(&self) -> Option<(u64, u64)> {
        match *self {
            Cap::Untyped { base, size_bits, .. } | Cap::Frame { base, size_bits, .. } => Some((base, 1 << size_bits)),
            Cap::CNode { base, radix, .. } => Some((base, (1u64 << radix) * crate::cdt::SLOT_BYTES)),
            Cap::Endpoint { obj, .. } | Cap::Notification { obj, .. } | Cap::Tcb { obj } => Some((obj, 1)),
            Cap::PageTable { base, .. } | Cap::AsidPool { base, .. } => Some((base, 4096)),
            Cap::SenderTable { base } => Some((base, 1 << abi::object::UINTR_SENDER_TABLE_BITS)),
            _ => None,
        }
    }

    pub fn badge(&self) -> u64 {
        match *self {
            Cap::Endpoint { badge, .. } | Cap::Notification { badge, .. } => badge,
            _ => 0,
        }
    }

    /// A copy stripped of rights not in `mask` (seL4 maskCapRights).
    pub fn mask_rights(self, mask: Rights) -> Cap {
        match self {
            Cap::Endpoint { obj, badge, rights } => Cap::Endpoint { obj, badge, rights: rights.intersect(mask) },
            Cap::Notification { obj, badge, rights, uintr } => {
                Cap::Notification { obj, badge, rights: rights.intersect(mask), uintr }
            }
            Cap::Frame { base, size_bits, rights, mapped } => {
                Cap::Frame { base, size_bits, rights: rights.intersect(mask), mapped }
            }
            c => c,
        }
    }

    /// Mint's data word: a badge for endpoints and notifications (only an unbadged cap can be
    /// badged), a new guard for CNodes (seL4 updateCapData). `None` means the result is Null.
    pub fn update_data(self, data: u64) -> Option<Cap> {
        match self {
            Cap::Endpoint { obj, badge: 0, rights } => Some(Cap::Endpoint { obj, badge: data, rights }),
            // A registered sender cap keeps its vector (= badge): it cannot be re-badged.
            Cap::Notification { obj, badge: 0, rights, uintr: 0 } => {
                Some(Cap::Notification { obj, badge: data, rights, uintr: 0 })
            }
            Cap::Endpoint { .. } | Cap::Notification { .. } => None,
            Cap::CNode { base, radix, .. } => {
                // seL4 layout of the data word: guard size in bits 5:0, guard value above.
                let guard_bits = (data & 0x3f) as u8;
                let guard = data >> 6;
                if guard_bits as u32 + radix as u32 > 64 || (guard_bits < 64 && guard >> guard_bits != 0) {
                    return None;
                }
                Some(Cap::CNode { base, radix, guard, guard_bits })
            }
            c => Some(c),
        }
    }

    /// The cap Copy/Mint may place in a new slot (seL4 deriveCap): frames are copied unmapped;
    /// only a page table that is mapped (or owns an ASID) can be copied; IRQControl,
    /// ASIDControl and reply caps cannot be copied.
    pub fn derive(self) -> Result<Cap, crate::Error> {
        match self {
            Cap::Null => Err(crate::Error::InvalidCapability(1)),
            Cap::IrqControl | Cap::AsidControl | Cap::DebugControl | Cap::UintrControl | Cap::Reply { .. } => {
                Err(crate::Error::IllegalOperation)
            }
            Cap::Frame { base, size_bits, rights, .. } => Ok(Cap::Frame { base, size_bits, rights, mapped: None }),
            Cap::PageTable { mapped: None, .. } => Err(crate::Error::IllegalOperation),
            Cap::Notification { obj, badge, rights, .. } => Ok(Cap::Notification { obj, badge, rights, uintr: 0 }),
            c => Ok(c),
        }
    }
}
