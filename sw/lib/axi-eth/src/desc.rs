//! The scatter-gather descriptor (PG021, 64-bit addresses: 16 words, 64-byte aligned) and the
//! checks of what the DMA wrote back into it. Nothing read from a descriptor is trusted: a
//! length past the buffer, a missing complete bit, an error bit or a frame split over buffers
//! is an error value, never a panic or an out-of-bounds slice.

/// One descriptor as the DMA reads and writes it. The driver touches it only through volatile
/// accesses (`ring`), since the DMA writes `status` and `app` behind the compiler's back.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub struct Desc {
    pub next: u32,
    pub next_msb: u32,
    pub buf: u32,
    pub buf_msb: u32,
    pub reserved: [u32; 2],
    pub control: u32,
    pub status: u32,
    pub app: [u32; 5],
    pub pad: [u32; 3],
}
const _: () = assert!(core::mem::size_of::<Desc>() == 64);

/// CONTROL: buffer length (bits 25:0; the board's DMA uses 16 of them), end and start of frame
/// (transmit).
pub const CTRL_LEN_MASK: u32 = (1 << 26) - 1;
pub const CTRL_EOF: u32 = 1 << 26;
pub const CTRL_SOF: u32 = 1 << 27;
/// STATUS: bytes transferred, receive end/start of frame, the three error bits, complete.
pub const ST_LEN_MASK: u32 = (1 << 26) - 1;
pub const ST_RXEOF: u32 = 1 << 26;
pub const ST_RXSOF: u32 = 1 << 27;
pub const ST_INT_ERR: u32 = 1 << 28;
pub const ST_SLV_ERR: u32 = 1 << 29;
pub const ST_DEC_ERR: u32 = 1 << 30;
pub const ST_COMPLETE: u32 = 1 << 31;
pub const ST_ERRORS: u32 = ST_INT_ERR | ST_SLV_ERR | ST_DEC_ERR;

/// Largest buffer one descriptor can describe on the board (`c_sg_length_width` = 16).
pub const MAX_BUF: usize = (1 << 16) - 1;
/// Shortest Ethernet frame a MAC passes on without its FCS (60 bytes padded; we accept the
/// 14-byte header at least, smoltcp checks the rest).
pub const MIN_FRAME: usize = 14;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescError {
    /// The complete bit is not set (the DMA has not finished this descriptor).
    NotComplete,
    /// The DMA reported an internal, slave or decode error on this descriptor (its bits 28-30).
    Dma { status: u32 },
    /// A received frame longer than its buffer, or shorter than an Ethernet header.
    RxLength { len: usize, buf: usize },
    /// A received frame that does not start and end in this one buffer (our buffers hold a
    /// whole frame, so the DMA split one it should not have, or a frame was cut).
    RxNotWhole { sof: bool, eof: bool },
    /// The frame length the Ethernet's status stream put in APP4 (bits 15:0) is not the byte
    /// count the DMA wrote into STATUS.
    RxLengthMismatch { status: usize, app4: usize },
    /// A transmit the DMA completed with another byte count than it was given.
    TxLength { sent: usize, len: usize },
}

impl core::fmt::Display for DescError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            DescError::NotComplete => write!(f, "descriptor not complete"),
            DescError::Dma { status } => write!(f, "DMA error in descriptor status {status:#010x}"),
            DescError::RxLength { len, buf } => write!(f, "received length {len} outside 14..={buf}"),
            DescError::RxNotWhole { sof, eof } => {
                write!(f, "received frame not whole in one buffer (sof {sof}, eof {eof})")
            }
            DescError::RxLengthMismatch { status, app4 } => {
                write!(f, "received length {status} but the status stream says {app4}")
            }
            DescError::TxLength { sent, len } => write!(f, "transmit completed {sent} of {len} bytes"),
        }
    }
}

fn common(status: u32) -> Result<(), DescError> {
    if status & ST_COMPLETE == 0 {
        return Err(DescError::NotComplete);
    }
    if status & ST_ERRORS != 0 {
        return Err(DescError::Dma { status });
    }
    Ok(())
}

/// A completed receive descriptor's frame length, checked against its buffer of `buf` bytes.
pub fn check_rx(status: u32, buf: usize) -> Result<usize, DescError> {
    common(status)?;
    let (sof, eof) = (status & ST_RXSOF != 0, status & ST_RXEOF != 0);
    if !(sof && eof) {
        return Err(DescError::RxNotWhole { sof, eof });
    }
    let len = (status & ST_LEN_MASK) as usize;
    if !(MIN_FRAME..=buf).contains(&len) {
        return Err(DescError::RxLength { len, buf });
    }
    Ok(len)
}

/// [`check_rx`], and the frame length the Ethernet's status stream wrote into APP4 (bits
/// 15:0 of the last descriptor of a frame, PG138) must agree with it.
pub fn check_rx_app4(status: u32, app4: u32, buf: usize) -> Result<usize, DescError> {
    let len = check_rx(status, buf)?;
    let app = (app4 & 0xFFFF) as usize;
    if app != len {
        return Err(DescError::RxLengthMismatch { status: len, app4: app });
    }
    Ok(len)
}

/// A completed transmit descriptor of `len` bytes.
pub fn check_tx(status: u32, len: usize) -> Result<(), DescError> {
    common(status)?;
    let sent = (status & ST_LEN_MASK) as usize;
    if sent != len {
        return Err(DescError::TxLength { sent, len });
    }
    Ok(())
}
