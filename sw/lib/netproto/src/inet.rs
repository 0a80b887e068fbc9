//! The Internet checksum (RFC 1071) of IPv4 headers and TCP segments in Ethernet frames, for the
//! net server's frame adapter: smoltcp is told the device checks and fills them (its checksum
//! capabilities for IPv4 and TCP off), and the adapter does it here, on each frame received
//! before smoltcp sees it and on each frame smoltcp built before it goes out. Same checks,
//! same bytes on the wire; the sum runs over aligned 64-bit words (smoltcp's takes two bytes at
//! a time, each a pair of byte loads on harts without misaligned access).
//!
//! The sum is taken in the machine's byte order (RFC 1071 2(B): the one's-complement sum does
//! not depend on it), and its 16-bit result is stored with the machine's byte order too, which
//! puts it on the wire in network order.

/// Ethernet header bytes (no VLAN tag: the adapter's frames never carry one).
const ETH: usize = 14;
const ETHERTYPE_IPV4: [u8; 2] = [0x08, 0x00];
const PROTO_TCP: u8 = 6;
/// The checksum's offset in the IPv4 header and in the TCP header.
const IPV4_CSUM: usize = 10;
const TCP_CSUM: usize = 16;

/// `a + b` with the carry out added back in (one's-complement addition in 64 bits).
#[inline(always)]
fn add(a: u64, b: u64) -> u64 {
    let (s, c) = a.overflowing_add(b);
    s + c as u64
}

/// `acc` plus the one's-complement sum of `data`'s 16-bit words (an odd last byte padded with a
/// zero), not folded. `data` must start at an even offset of the words it is part of (every
/// header and segment of a frame does); an odd address only costs speed.
pub fn sum(data: &[u8], acc: u64) -> u64 {
    if data.as_ptr() as usize & 1 != 0 {
        return sum_pairs(data, acc);
    }
    // SAFETY: any 8 bytes are a valid u64; `align_to` gives the aligned middle as u64s.
    let (head, mid, tail) = unsafe { data.align_to::<u64>() };
    // An even address: the aligned words' 16-bit lanes are the data's words.
    let mut acc = sum_pairs(head, acc);
    let mut a = 0u64;
    let mut b = 0u64;
    let mut words = mid.chunks_exact(2);
    for w in &mut words {
        a = add(a, w[0]);
        b = add(b, w[1]);
    }
    for &w in words.remainder() {
        a = add(a, w);
    }
    acc = add(acc, add(a, b));
    // `head` was even (an even address up to an aligned one), so the tail's words line up.
    sum_pairs(tail, acc)
}

/// The plain way, for short pieces: two bytes at a time.
fn sum_pairs(data: &[u8], mut acc: u64) -> u64 {
    let mut pairs = data.chunks_exact(2);
    for p in &mut pairs {
        acc = add(acc, u16::from_ne_bytes([p[0], p[1]]) as u64);
    }
    if let [last] = pairs.remainder() {
        acc = add(acc, u16::from_ne_bytes([*last, 0]) as u64);
    }
    acc
}

/// A 64-bit one's-complement sum folded to 16 bits.
pub fn fold(acc: u64) -> u16 {
    let s = (acc & 0xffff_ffff) + (acc >> 32);
    let s = (s & 0xffff) + (s >> 16);
    let s = (s & 0xffff) + (s >> 16);
    let s = (s & 0xffff) + (s >> 16);
    s as u16
}

/// The IPv4 header and the TCP segment of a frame: (IPv4 header length, protocol, segment range
/// in the frame), None if the frame is not IPv4 or its lengths do not fit (smoltcp drops such a
/// frame as malformed or truncated).
fn ipv4(frame: &[u8]) -> Option<(usize, u8, core::ops::Range<usize>)> {
    if frame.len() < ETH + 20 || frame[12..14] != ETHERTYPE_IPV4 {
        return None;
    }
    let ip = &frame[ETH..];
    let ihl = (ip[0] & 0xf) as usize * 4;
    let total = u16::from_be_bytes([ip[2], ip[3]]) as usize;
    if ip[0] >> 4 != 4 || ihl < 20 || total < ihl || total > ip.len() {
        return None;
    }
    Some((ihl, ip[9], ETH + ihl..ETH + total))
}

/// The TCP pseudo-header's protocol and length words (its addresses are the IPv4 header's
/// bytes 12..20, summed separately).
fn pseudo_words(len: usize) -> u64 {
    u16::from_ne_bytes([0, PROTO_TCP]) as u64 + u16::from_ne_bytes((len as u16).to_be_bytes()) as u64
}

/// A frame's sums: (IPv4 header, TCP segment with its pseudo-header), not folded. A frame at an
/// even address (every driver buffer, at any padding) is read in aligned words, each of its
/// three ranges a word at a time; at an odd one two bytes at a time.
fn sums(frame: &[u8], ihl: usize, seg: &core::ops::Range<usize>) -> (u64, u64) {
    let ip = ETH..ETH + ihl;
    let addrs = ETH + 12..ETH + 20;
    if frame.as_ptr() as usize & 1 != 0 {
        let a = sum(&frame[addrs], 0);
        return (sum(&frame[ip], 0), sum(&frame[seg.clone()], add(a, pseudo_words(seg.len()))));
    }
    let words = Words::new(frame);
    let a = words.range(addrs.start, addrs.end);
    (words.range(ip.start, ip.end), add(words.range(seg.start, seg.end), add(a, pseudo_words(seg.len()))))
}

/// A frame at an even address, read as the aligned 64-bit words that hold it: word k is the
/// aligned word at `base + 8k`, which holds frame bytes `8k - off .. 8k + 8 - off` (a word that
/// reaches outside the frame is put together from the frame's bytes alone). An even `off`
/// keeps every 16-bit lane on one of the frame's words, so the lanes sum as the words do.
struct Words<'a> {
    frame: &'a [u8],
    base: *const u64,
    off: usize,
}

impl<'a> Words<'a> {
    fn new(frame: &'a [u8]) -> Words<'a> {
        let off = frame.as_ptr() as usize % 8;
        Words { frame, base: frame.as_ptr().wrapping_sub(off) as *const u64, off }
    }

    /// Word k, put together from the frame's bytes, in the machine's order; bytes outside the
    /// frame read as zero.
    fn partial(&self, k: usize) -> u64 {
        let mut w = 0u64;
        for i in 0..8 {
            if let Some(&x) = (8 * k + i).checked_sub(self.off).and_then(|j| self.frame.get(j)) {
                // A byte by itself into place (a copy into a padded array would call memcpy).
                w |= if cfg!(target_endian = "little") { (x as u64) << (8 * i) } else { (x as u64) << (56 - 8 * i) };
            }
        }
        w
    }

    /// The masks of word `a / 8` from byte a on and of word `(b - 1) / 8` up to byte b, as
    /// masks of the words read in the machine's order (a < b, offsets from `base`).
    #[inline(always)]
    fn masks(a: usize, b: usize) -> (u64, u64) {
        if cfg!(target_endian = "little") {
            (!0u64 << (8 * (a % 8)), !0u64 >> (8 * (7 - (b - 1) % 8)))
        } else {
            (!0u64 >> (8 * (a % 8)), !0u64 << (8 * (7 - (b - 1) % 8)))
        }
    }

    /// The sum of the words first+1 .. last, which lie wholly inside the frame: read without
    /// checks, as 32-bit halves into two sums that cannot carry out (a frame has far fewer than
    /// 2^32 words), rather than a 64-bit add with its carry put back for every word.
    #[inline(always)]
    fn between(&self, first: usize, last: usize) -> u64 {
        let mut s = [0u64; 2];
        // SAFETY: the caller's promise; aligned as `base` is.
        unsafe {
            let mut p = self.base.add(first + 1) as *const u32;
            let end = self.base.add(last) as *const u32;
            while p < end {
                s[0] += p.read() as u64;
                s[1] += p.add(1).read() as u64;
                p = p.add(2);
            }
        }
        s[0] + s[1]
    }

    /// The sum of frame bytes a..b (a even, b at most the frame's length): whole words, the
    /// first and the last with the bytes outside the range masked off.
    fn range(&self, a: usize, b: usize) -> u64 {
        if a >= b {
            return 0;
        }
        let (a, b) = (a + self.off, b + self.off);
        let (first, last) = (a / 8, (b - 1) / 8);
        if 8 * first < self.off || 8 * last + 8 > self.frame.len() + self.off {
            // A first word before the frame's start or a last one past its end: never the
            // headers, nor a segment of an even length (a call in the tail, so this path costs
            // the common one no saved registers).
            return self.range_edges(a, b);
        }
        let (lo, hi) = Self::masks(a, b);
        // SAFETY: words first..=last are inside the frame (just checked), aligned as `base` is.
        let (w0, wn) = unsafe { (self.base.add(first).read(), self.base.add(last).read()) };
        if first == last {
            return w0 & lo & hi;
        }
        add(add(w0 & lo, wn & hi), self.between(first, last))
    }

    /// `range` (a, b already offsets from `base`) when its first or last word reaches outside
    /// the frame.
    #[cold]
    #[inline(never)]
    fn range_edges(&self, a: usize, b: usize) -> u64 {
        let (first, last) = (a / 8, (b - 1) / 8);
        let (lo, hi) = Self::masks(a, b);
        if first == last {
            return self.partial(first) & lo & hi;
        }
        add(add(self.partial(first) & lo, self.partial(last) & hi), self.between(first, last))
    }
}

/// Is a received frame's IPv4 header checksum right, and its TCP segment's (over what the IPv4
/// header's total length says, as smoltcp checks it, fragments included)? True for a frame that
/// is not IPv4 or not well formed (smoltcp checks the rest, and drops a malformed one), and for
/// other protocols than TCP past the IPv4 header (smoltcp checks ICMP's itself).
pub fn frame_ok(frame: &[u8]) -> bool {
    let Some((ihl, proto, seg)) = ipv4(frame) else { return true };
    let (ip, tcp) = sums(frame, ihl, &seg);
    fold(ip) == 0xffff && (proto != PROTO_TCP || fold(tcp) == 0xffff)
}

/// Fill in the IPv4 header checksum of a frame to send and, for a TCP segment, the TCP checksum
/// (smoltcp left both zero). A frame that is not IPv4 or not well formed is left alone.
pub fn fill(frame: &mut [u8]) {
    let Some((ihl, proto, seg)) = ipv4(frame) else { return };
    let tcp = proto == PROTO_TCP && seg.len() >= TCP_CSUM + 2;
    frame[ETH + IPV4_CSUM..ETH + IPV4_CSUM + 2].fill(0);
    if tcp {
        frame[seg.start + TCP_CSUM..seg.start + TCP_CSUM + 2].fill(0);
    }
    let (ip, sum_tcp) = sums(frame, ihl, &seg);
    frame[ETH + IPV4_CSUM..ETH + IPV4_CSUM + 2].copy_from_slice(&(!fold(ip)).to_ne_bytes());
    if tcp {
        frame[seg.start + TCP_CSUM..seg.start + TCP_CSUM + 2].copy_from_slice(&(!fold(sum_tcp)).to_ne_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 1071 the slow way: big-endian 16-bit words, carries folded at the end.
    fn reference(data: &[u8]) -> u16 {
        let mut s: u64 = 0;
        for p in data.chunks(2) {
            s += u16::from_be_bytes([p[0], *p.get(1).unwrap_or(&0)]) as u64;
        }
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }

    fn bytes(seed: u64, n: usize) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[test]
    fn sum_matches_the_reference_at_every_offset_and_length() {
        let buf = bytes(7, 300);
        for off in 0..17 {
            for len in 0..200 {
                let d = &buf[off..off + len];
                let ours = fold(sum(d, 0));
                // Our sum is in machine order: its bytes in memory are the big-endian result.
                assert_eq!(u16::from_be_bytes(ours.to_ne_bytes()), reference(d), "off {off} len {len}");
            }
        }
        // All ones: carries at every step.
        let ff = [0xffu8; 64];
        assert_eq!(fold(sum(&ff, 0)), 0xffff);
    }

    /// A TCP/IPv4 frame with `payload`, checksums zero.
    fn frame(payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 14];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        let total = 20 + 20 + payload.len();
        let mut ip = vec![0x45, 0, (total >> 8) as u8, total as u8, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0];
        ip.extend_from_slice(&[10, 0, 2, 2, 10, 0, 2, 15]);
        f.extend_from_slice(&ip);
        let tcp = [0xc0, 0x01, 0x15, 0xb3, 1, 2, 3, 4, 5, 6, 7, 8, 0x50, 0x18, 0x10, 0x00, 0, 0, 0, 0];
        f.extend_from_slice(&tcp);
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn fill_then_check_and_what_smoltcp_would_compute() {
        for n in [0usize, 1, 63, 64, 65, 1000] {
            let mut f = frame(&bytes(n as u64 + 3, n));
            // Padding after the IPv4 packet (a short frame's) is not summed.
            f.extend_from_slice(&[0xaa; 6]);
            fill(&mut f);
            assert!(frame_ok(&f), "payload {n}");
            // The IPv4 header sums to all ones; the segment with its pseudo-header too.
            assert_eq!(reference(&f[14..34]), 0xffff);
            let seg = &f[34..34 + 20 + n];
            let mut ph = f[26..34].to_vec();
            ph.extend_from_slice(&[0, 6, ((20 + n) >> 8) as u8, (20 + n) as u8]);
            ph.extend_from_slice(seg);
            assert_eq!(reference(&ph), 0xffff, "payload {n}");
            // Any flipped bit is caught.
            for at in [14 + 1, 14 + 12, 34 + 4, f.len() - 7] {
                let mut g = f.clone();
                g[at] ^= 0x10;
                assert!(!frame_ok(&g), "payload {n}, byte {at}");
            }
            // Padding is not part of it.
            let mut g = f.clone();
            let last = g.len() - 1;
            g[last] ^= 1;
            assert!(frame_ok(&g));
        }
    }

    #[repr(align(8))]
    struct Aligned([u8; 2048]);

    #[test]
    fn aligned_words_and_pairs_agree_at_any_placement() {
        // The same frames filled and checked at every placement in a word: even addresses take
        // the word path (offset 2 is the drivers' padded receive buffers'), odd ones the pair
        // path; every length around the words' edges.
        for n in 0..80usize {
            let mut want = frame(&bytes(n as u64 + 11, n));
            fill(&mut want);
            for off in 0..17usize {
                let mut buf = Aligned([0; 2048]);
                let f = &mut buf.0[off..off + want.len()];
                f.copy_from_slice(&frame(&bytes(n as u64 + 11, n)));
                fill(f);
                assert_eq!(f, &want[..], "payload {n} at {off}");
                assert!(frame_ok(f));
                f[f.len() - 1] ^= 0x40;
                assert!(!frame_ok(f) || n == 0, "payload {n} at {off}");
            }
        }
    }

    #[test]
    fn other_frames_pass_untouched() {
        let arp = {
            let mut f = vec![0u8; 42];
            f[12..14].copy_from_slice(&[0x08, 0x06]);
            f
        };
        assert!(frame_ok(&arp));
        let mut a = arp.clone();
        fill(&mut a);
        assert_eq!(a, arp);
        // A total length past the frame: left to smoltcp (truncated), not summed.
        let mut f = frame(&[1, 2, 3]);
        f[16] = 0x7f;
        assert!(frame_ok(&f));
        // ICMP: only the IPv4 header is ours.
        let mut f = frame(&[1, 2, 3]);
        f[14 + 9] = 1;
        fill(&mut f);
        assert_eq!(reference(&f[14..34]), 0xffff);
        assert_eq!(&f[34 + 16..34 + 18], &[0, 0]);
        assert!(frame_ok(&f));
    }

    /// A hostile peer's frames: damaged lengths, versions, header lengths, protocols and bytes,
    /// at any length and placement. Checking and filling never panic (every range comes from
    /// the frame's own checked lengths), and a damaged frame is both accepted (not IPv4, left to
    /// smoltcp) and refused (a wrong sum) across the run.
    #[test]
    fn damaged_frames_never_panic() {
        let (mut ok, mut refused) = (0, 0);
        let mut buf = Aligned([0; 2048]);
        for i in 0..20_000u64 {
            let r = bytes(i * 7 + 1, 16);
            let mut f = frame(&bytes(i, r[0] as usize % 80));
            fill(&mut f);
            // A few bytes of the Ethernet and IPv4 headers (and beyond) set to anything.
            for k in 0..(r[1] % 4) as usize {
                let at = r[2 + 2 * k] as usize % f.len().min(60);
                f[at] = r[3 + 2 * k];
            }
            // Cut short or padded.
            match r[10] % 3 {
                0 => f.truncate(r[11] as usize % (f.len() + 1)),
                1 => f.extend_from_slice(&bytes(i, r[11] as usize % 20)),
                _ => {}
            }
            let off = r[12] as usize % 9;
            let g = &mut buf.0[off..off + f.len()];
            g.copy_from_slice(&f);
            if frame_ok(g) {
                ok += 1;
            } else {
                refused += 1;
            }
            fill(g);
        }
        assert!(ok > 0 && refused > 0, "accepted {ok}, refused {refused}");
    }
}
