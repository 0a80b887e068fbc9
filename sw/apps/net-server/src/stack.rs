//! smoltcp's interface and TCP sockets, and what the server adds on top: who a socket belongs
//! to (free, listening for a port, established and waiting to be accepted, the client's, being
//! closed), a backlog of listening sockets per port kept topped up from the free ones, and the
//! accept queue. With no socket left to listen on, smoltcp answers a SYN with a reset: more
//! connections than sockets are refused, not queued.
//!
//! After each smoltcp run only the sockets whose use can have changed are looked at: waiting to
//! be accepted or being closed, and the listening ones only when a SYN came in (`Frames`).
//! An established connection the client owns is smoltcp's business alone.
//!
//! smoltcp passes over every socket of its set several times a run (each frame's lookup, each
//! egress pass, the next deadline), so its set holds only the live ones: a free socket waits
//! outside it (`parked`), and a listener keeps only its backlog in Listen, topped up after
//! every frame that may be a SYN (frames are taken one at a time), so a small backlog takes a
//! burst of connections as well as a large one.
use crate::frames::Frames;
use crate::local::Local;
use crate::nic::Driver;
use core::task::Waker;
use netproto::{MAX_BACKLOG, SOCKETS};
use smoltcp::iface::{Config, Interface, PollIngressSingleResult, SocketHandle, SocketSet, SocketStorage};
use smoltcp::socket::{tcp, Socket};
use smoltcp::time::{Duration, Instant};
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpAddress, IpCidr, Ipv4Address};

/// Ports served at once.
pub const LISTENERS: usize = 4;
/// Each socket's smoltcp buffers (the TCP window is at most this).
const SOCK_BUF: usize = 4096;
/// Accept calls that can wait on one listener (the sync TCP server has a thread per socket,
/// each in its own ACCEPT between connections); more are told to poll again.
const WAITERS: usize = SOCKETS + 4;
/// A connection whose handshake is not done this long after its SYN is dropped (microseconds):
/// half-open connections (a SYN flood, a peer that vanished) must not hold sockets for good.
/// Checked whenever the stack runs, i.e. on every frame, so a flood clears its own debris.
pub const HALF_OPEN_US: i64 = 3_000_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Use {
    /// Closed, outside smoltcp's set (`parked`).
    Free,
    /// In smoltcp's Listen state for listener l.
    Listening(u8),
    /// Left Listen (a connection is being set up or is up) and not yet accepted.
    Pending(u8),
    /// Accepted: the client's.
    Owned,
    /// The client closed it; free once smoltcp is done with the connection.
    Closing,
    /// Given up (aborted, or closed with its peer still known): Free once smoltcp has sent
    /// its reset and forgotten the peer. Meanwhile it counts as free: a listener may take it
    /// (`listen` forgets the peer; the reset is not sent then, as when a peer never answers ARP).
    Releasing,
}

struct Listener {
    port: u16,
    backlog: usize,
    /// Its sockets in Listen.
    listening: usize,
    waiters: [Option<Waker>; WAITERS],
}

#[derive(Clone, Copy, Default)]
pub struct StackStats {
    pub accepted: u64,
    /// Half-open connections dropped after HALF_OPEN_US.
    pub half_open_dropped: u64,
}

pub struct Stack {
    pub iface: Interface,
    /// smoltcp's set over `STORAGE[..set_len]` (see `resize`).
    pub set: SocketSet<'static>,
    storage: *mut SocketStorage<'static>,
    set_len: usize,
    /// Which slots of STORAGE hold a socket.
    slot_used: [bool; SOCKETS],
    /// Each socket's place in `set`; None while it is parked.
    handles: [Option<SocketHandle>; SOCKETS],
    /// The free sockets, kept out of `set` so that smoltcp's passes skip them.
    parked: &'static mut [Option<tcp::Socket<'static>>; SOCKETS],
    pub uses: [Use; SOCKETS],
    /// When each Pending socket left Listen (smoltcp clock, microseconds).
    since: [i64; SOCKETS],
    listeners: [Option<Listener>; LISTENERS],
    /// Sockets Free or Releasing, and Pending, Closing or Releasing (the ones `maintain` looks
    /// at after every run).
    free: usize,
    watched: usize,
    /// A listener may be short of sockets in Listen while free ones are left: `maintain` must
    /// top it up. Set whenever a socket leaves Listen or becomes free, and when a listener is
    /// added; cleared when `maintain` finds every listener topped up (or no socket free).
    topup: bool,
    /// When the oldest half-open connection reaches its limit (microseconds), if any.
    half_open_at: Option<i64>,
    /// Each socket's ACK delay (set when it starts listening).
    ack_delay: Option<Duration>,
    pub stats: StackStats,
}

/// smoltcp's socket slots. Its set sees only the first `Stack::set_len` of them, just enough for
/// the sockets in it: smoltcp walks every slot of its set, empty or not, for each frame's
/// lookup, each egress pass and each deadline, and a slot is 448 bytes (7 cache lines), so a
/// pass over all 24 empty ones at 4 connections read 24 lines where ~6 hold sockets.
static mut STORAGE: [SocketStorage<'static>; SOCKETS] = [SocketStorage::EMPTY; SOCKETS];
/// One socket buffer and the gap to the next. At a 4 KiB stride every buffer's first bytes
/// would fall in the same set of the 4-way L1 data cache (64 sets of 64 bytes: an address's set
/// repeats every 4 KiB), and a transmit buffer is written from its start again whenever it was
/// empty (smoltcp's ring starts over), i.e. for nearly every response: the sockets' buffers
/// (and the frames, 2 KiB aligned) would evict one another. Three lines more each puts the
/// starts of all of them (receive and transmit buffer of a socket side by side) in different
/// sets.
#[repr(C, align(64))]
struct SockBuf {
    buf: [u8; SOCK_BUF],
    _gap: [u8; 3 * 64],
}

/// Socket i's receive buffer is 2i, its transmit buffer 2i + 1. They live in the DMA pool's
/// mega page after the NIC's rings (`init`), not in our image: as 4 KiB pages beside
/// everything else the hart touches per request, copies into and out of them cost page walks
/// (the L1 TLB holds 8 sectors of 4 pages, the pool's page is one superpage entry), and each
/// image page costs the loader a Retype and a mapping at boot.
type Bufs = [SockBuf; 2 * SOCKETS];

static mut PARKED: [Option<tcp::Socket<'static>>; SOCKETS] = [const { None }; SOCKETS];

/// The one stack of the server (made in `init`).
pub static STACK: Local<Option<Stack>> = Local::new(None);

/// Run `f` on the stack. Must not be nested, nor called from a smoltcp callback.
pub fn with<R>(f: impl FnOnce(&mut Stack) -> R) -> R {
    STACK.with(|s| f(s.as_mut().expect("stack initialised before any task runs")))
}

/// How long an ACK may wait for data to ride on, when the poller has timers (async variant):
/// a request's ACK then goes with its response, not in a frame of its own. Without timers
/// (sync variant: smoltcp runs on events only) none may wait.
pub const ACK_DELAY: Duration = Duration::from_millis(10);

/// The DMA pool has no room left for the socket buffers.
#[derive(Debug)]
pub struct NoRoom;

/// Build the interface and every socket. Called once, before the executor runs, after the NIC
/// took its part of the DMA pool.
pub fn init(
    nic: &'static dyn Driver,
    ip: [u8; 4],
    prefix: u8,
    gateway: [u8; 4],
    now: Instant,
    seed: u64,
    ack_delay: Option<Duration>,
) -> Result<(), NoRoom> {
    let (_, at) = crate::hal::alloc(core::mem::size_of::<Bufs>().div_ceil(4096)).ok_or(NoRoom)?;
    let mut config = Config::new(HardwareAddress::Ethernet(EthernetAddress(nic.mac())));
    config.random_seed = seed;
    let mut iface = Interface::new(config, &mut Frames::new(nic), now);
    iface.update_ip_addrs(|a| {
        let _ = a.push(IpCidr::new(IpAddress::Ipv4(Ipv4Address::from(ip)), prefix));
    });
    let _ = iface.routes_mut().add_default_ipv4_route(Ipv4Address::from(gateway));
    // SAFETY: init runs once, before anything else can reach these statics; from here on
    // they are reachable only through the socket set. The buffers are fresh pool pages that
    // `hal::alloc` hands out once (page-aligned, mapped for good, any bytes a valid SockBuf).
    let (storage, bufs, parked) = unsafe {
        (
            core::ptr::addr_of_mut!(STORAGE) as *mut SocketStorage<'static>,
            &mut *(at as *mut Bufs),
            &mut *core::ptr::addr_of_mut!(PARKED),
        )
    };
    for (p, b) in parked.iter_mut().zip(bufs.chunks_exact_mut(2)) {
        let [r, t] = b else { unreachable!("chunks of two") };
        *p = Some(tcp::Socket::new(tcp::SocketBuffer::new(&mut r.buf[..]), tcp::SocketBuffer::new(&mut t.buf[..])));
    }
    let stack = Stack {
        iface,
        set: SocketSet::new(&mut [][..]),
        storage,
        set_len: 0,
        slot_used: [false; SOCKETS],
        handles: [None; SOCKETS],
        parked,
        uses: [Use::Free; SOCKETS],
        since: [0; SOCKETS],
        listeners: [const { None }; LISTENERS],
        free: SOCKETS,
        watched: 0,
        topup: false,
        half_open_at: None,
        ack_delay,
        stats: StackStats::default(),
    };
    STACK.with(|s| *s = Some(stack));
    Ok(())
}

/// A connection the client can take: the handshake is done (the peer may have closed its side
/// already; its data is still there to read).
fn acceptable(st: tcp::State) -> bool {
    matches!(st, tcp::State::Established | tcp::State::CloseWait)
}

impl Stack {
    /// Socket `sock`, which must not be Free (callers check its use first).
    pub fn tcp(&mut self, sock: usize) -> &mut tcp::Socket<'static> {
        self.set.get_mut::<tcp::Socket>(self.handles[sock].expect("a socket in use is in the set"))
    }

    /// smoltcp's set over the first `len` slots of STORAGE (every socket in it lies there:
    /// the callers grow it before an add into a full set and shrink it only past empty slots).
    /// Handles are slot numbers, so they stay good.
    fn resize(&mut self, len: usize) {
        debug_assert!(len <= SOCKETS && self.slot_used[len..].iter().all(|u| !u));
        // The old set's borrow of STORAGE ends before the new one is made.
        self.set = SocketSet::new(&mut [][..]);
        // SAFETY: STORAGE is reachable only through this set (`init`), and `len` slots of it
        // exist.
        self.set = SocketSet::new(unsafe { core::slice::from_raw_parts_mut(self.storage, len) });
        self.set_len = len;
    }

    /// The STORAGE slot smoltcp put the socket of handle `h` in.
    fn slot_of(&self, h: SocketHandle) -> usize {
        let at = self.set.get::<tcp::Socket>(h) as *const tcp::Socket as usize;
        (at - self.storage as usize) / core::mem::size_of::<SocketStorage>()
    }

    /// A free socket goes back into smoltcp's set (one slot longer if it is full).
    fn unpark(&mut self, i: usize) {
        if let Some(s) = self.parked[i].take() {
            if self.slot_used[..self.set_len].iter().all(|&u| u) {
                self.resize(self.set_len + 1);
            }
            let h = self.set.add(s);
            let slot = self.slot_of(h);
            self.slot_used[slot] = true;
            self.handles[i] = Some(h);
        }
    }

    /// Socket `i` is done with (closed or aborted): Free and out of the set once smoltcp has
    /// nothing left to send for it (an abort's reset) and has forgotten its peer; Releasing
    /// until then.
    fn release(&mut self, i: usize) {
        let s = self.tcp(i);
        if s.state() != tcp::State::Closed || s.remote_endpoint().is_some() {
            self.set_use(i, Use::Releasing);
            return;
        }
        self.park(i);
        self.set_use(i, Use::Free);
    }

    /// Socket `i` leaves smoltcp's set.
    fn park(&mut self, i: usize) {
        if let Some(h) = self.handles[i].take() {
            let slot = self.slot_of(h);
            let Socket::Tcp(s) = self.set.remove(h);
            self.parked[i] = Some(s);
            self.slot_used[slot] = false;
            let len = self.slot_used[..self.set_len].iter().rposition(|&u| u).map_or(0, |k| k + 1);
            if len < self.set_len {
                self.resize(len);
            }
        }
    }

    /// Start listening on `port` with `backlog` sockets; the listener's number.
    pub fn listen(&mut self, port: u16, backlog: usize, now: Instant) -> Result<usize, u32> {
        if port == 0 || !(1..=MAX_BACKLOG).contains(&backlog) {
            return Err(netproto::error::BAD_ARGUMENT);
        }
        if self.listeners.iter().flatten().any(|l| l.port == port) {
            return Err(netproto::error::NO_SOCKET);
        }
        let Some(i) = self.listeners.iter().position(|l| l.is_none()) else {
            return Err(netproto::error::NO_SOCKET);
        };
        self.listeners[i] = Some(Listener { port, backlog, listening: 0, waiters: [const { None }; WAITERS] });
        self.topup = true;
        self.maintain(now.total_micros(), false);
        Ok(i)
    }

    pub fn is_listener(&self, l: usize) -> bool {
        self.listeners.get(l).is_some_and(|l| l.is_some())
    }

    /// An accepted connection of listener `l`, if one is up: (socket, remote address, port).
    /// Otherwise `waker` (if any) is kept and woken when one comes.
    pub fn accept(&mut self, l: usize, waker: Option<&Waker>) -> Option<(usize, u32, u16)> {
        for i in 0..SOCKETS {
            if self.uses[i] != Use::Pending(l as u8) {
                continue;
            }
            let s = self.tcp(i);
            if acceptable(s.state()) {
                let (addr, port) = match s.remote_endpoint() {
                    Some(e) => (
                        match e.addr {
                            IpAddress::Ipv4(a) => u32::from_be_bytes(a.octets()),
                        },
                        e.port,
                    ),
                    None => (0, 0),
                };
                self.set_use(i, Use::Owned);
                self.stats.accepted += 1;
                return Some((i, addr, port));
            }
        }
        let waker = waker?;
        let w = &mut self.listeners[l].as_mut().expect("checked by the caller").waiters;
        if w.iter().flatten().any(|x| x.will_wake(waker)) {
            return None;
        }
        match w.iter_mut().find(|x| x.is_none()) {
            Some(slot) => *slot = Some(waker.clone()),
            // More acceptors than places: poll again next turn.
            None => waker.wake_by_ref(),
        }
        None
    }

    /// The client is done with `sock`: close our side (the peer sees end of stream).
    pub fn close(&mut self, sock: usize) {
        let s = self.tcp(sock);
        s.close();
        if s.state() == tcp::State::Closed {
            self.release(sock);
        } else {
            self.set_use(sock, Use::Closing);
        }
    }

    /// Socket `i`'s use becomes `u`, and the counts follow.
    fn set_use(&mut self, i: usize, u: Use) {
        let old = core::mem::replace(&mut self.uses[i], u);
        self.count(old, false);
        self.count(u, true);
        if matches!(old, Use::Listening(_)) || matches!(u, Use::Free | Use::Releasing) {
            self.topup = true;
        }
    }

    fn count(&mut self, u: Use, add: bool) {
        let n = match u {
            Use::Free => &mut self.free,
            Use::Releasing => {
                self.free = if add { self.free + 1 } else { self.free - 1 };
                &mut self.watched
            }
            Use::Pending(_) | Use::Closing => &mut self.watched,
            Use::Listening(l) => match self.listeners[l as usize].as_mut() {
                Some(lis) => &mut lis.listening,
                None => return,
            },
            Use::Owned => return,
        };
        *n = if add { *n + 1 } else { *n - 1 };
    }

    /// One run of smoltcp: frames in, frames out, then the sockets' uses. Half-open connections
    /// past their limit go first, before a SYN among the frames looks for a socket. Frames are
    /// taken one at a time (`Interface::poll` less its maintenance, which our features leave
    /// empty), and after one that may have been a SYN the listeners' backlogs are topped up
    /// before the next: each SYN finds a socket in Listen as long as free ones are left.
    ///
    /// In two halves, `poll_in` and `poll_out`: between them the poller hands the data that
    /// came to the client, whose work on it then overlaps the egress pass.
    /// True if a frame came in.
    pub fn poll_in(&mut self, now: Instant, nic: &dyn Driver) -> bool {
        let t = now.total_micros();
        if self.half_open_at.is_some_and(|at| at <= t) {
            self.maintain(t, false);
        }
        let mut dev = Frames::new(nic);
        let mut any = false;
        while self.iface.poll_ingress_single(now, &mut dev, &mut self.set) != PollIngressSingleResult::None {
            any = true;
            if dev.take_syn() {
                self.maintain(t, true);
            }
        }
        any
    }

    /// The second half of a run (`poll_in`): frames out, then the sockets' uses. With `lazy`
    /// (the run came for frames only, no handler changed a socket) the egress pass (a dispatch
    /// per socket) is made only when smoltcp's next deadline says something is due now
    /// (`Interface::poll_at`, which mirrors the start of each socket's dispatch); otherwise that
    /// deadline is returned: it stands until smoltcp runs again (a request's data that came
    /// with its ACK delayed sends nothing until the response). None when the pass was made, or
    /// with `defer` (the run handed the client requests, whose answers will most likely run
    /// smoltcp with a pass before the poller sleeps): neither the pass nor the deadline (a look
    /// at every socket) then; the poller works the deadline out if it is about to sleep.
    pub fn poll_out(&mut self, now: Instant, nic: &dyn Driver, lazy: bool, defer: bool) -> Option<Option<Instant>> {
        let t = now.total_micros();
        if lazy {
            self.maintain(t, false);
            if defer {
                return None;
            }
            let next = self.deadline(now);
            if next.is_none_or(|d| d > now) {
                return Some(next);
            }
        }
        let mut dev = Frames::new(nic);
        // One egress pass (a segment per socket at most): `Interface::poll` repeats it until a
        // pass sends nothing, which for request/response traffic is a second pass over every
        // socket per run for nothing. A socket with more to send says so in its deadline
        // ("now"), which the poller looks at before it sleeps, and runs us again.
        self.iface.poll_egress(now, &mut dev, &mut self.set);
        self.maintain(t, false);
        None
    }

    /// When smoltcp must run next (a retransmission, TIME_WAIT's end, a half-open
    /// connection's limit), if ever.
    pub fn deadline(&mut self, now: Instant) -> Option<Instant> {
        let half_open = self.half_open_at.map(Instant::from_micros);
        match (self.iface.poll_at(now, &self.set), half_open) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// After a smoltcp run (`syn`: a SYN may have come in): move sockets between uses as their
    /// connections changed, drop half-open connections older than HALF_OPEN_US, wake acceptors
    /// of new connections, and top each listener's backlog up from the free sockets.
    #[inline]
    fn maintain(&mut self, now: i64, syn: bool) {
        // Nothing to look at and no listener to top up: the run changed no socket's use (an
        // established connection's traffic), which is most runs.
        if !syn && self.watched == 0 && !self.topup {
            self.half_open_at = None;
            return;
        }
        self.maintain_all(now, syn);
    }

    #[inline(never)]
    fn maintain_all(&mut self, now: i64, syn: bool) {
        if syn || self.watched > 0 {
            self.scan(now, syn);
        } else {
            self.half_open_at = None;
        }
        for l in 0..LISTENERS {
            let Some(lis) = self.listeners[l].as_ref() else { continue };
            let (port, mut missing) = (lis.port, lis.backlog.saturating_sub(lis.listening));
            let ack_delay = self.ack_delay;
            let mut i = 0;
            while missing > 0 && self.free > 0 && i < SOCKETS {
                if matches!(self.uses[i], Use::Free | Use::Releasing) {
                    self.unpark(i);
                    let s = self.tcp(i);
                    // Request/response traffic: no Nagle; ACKs as `ack_delay` says.
                    s.set_nagle_enabled(false);
                    s.set_ack_delay(ack_delay);
                    if s.listen(port).is_ok() {
                        self.set_use(i, Use::Listening(l as u8));
                        missing -= 1;
                    } else if self.uses[i] == Use::Free {
                        self.park(i);
                    }
                }
                i += 1;
            }
        }
        self.topup = self.free > 0 && self.listeners.iter().flatten().any(|l| l.listening < l.backlog);
    }

    /// The sockets whose use may have changed: Pending, Closing and Releasing ones, Listening
    /// ones if `syn`.
    fn scan(&mut self, now: i64, syn: bool) {
        // Listeners with a connection up and waiting to be accepted.
        let mut ready = [false; LISTENERS];
        let mut half_open: Option<i64> = None;
        for i in 0..SOCKETS {
            let u = self.uses[i];
            let look = match u {
                Use::Pending(_) | Use::Closing | Use::Releasing => true,
                Use::Listening(_) => syn,
                Use::Free | Use::Owned => false,
            };
            if !look {
                continue;
            }
            let st = self.tcp(i).state();
            let new = match u {
                Use::Listening(_) if st == tcp::State::Closed => Use::Free,
                Use::Listening(l) if st != tcp::State::Listen => {
                    self.since[i] = now;
                    Use::Pending(l)
                }
                // smoltcp takes a socket reset during the handshake back to Listen.
                Use::Pending(l) if st == tcp::State::Listen => Use::Listening(l),
                Use::Pending(_) if matches!(st, tcp::State::Closed | tcp::State::TimeWait) => {
                    self.tcp(i).abort();
                    Use::Free
                }
                Use::Pending(_) if st == tcp::State::SynReceived && now - self.since[i] > HALF_OPEN_US => {
                    self.tcp(i).abort();
                    self.stats.half_open_dropped += 1;
                    Use::Free
                }
                Use::Closing if st == tcp::State::Closed => Use::Free,
                Use::Releasing => Use::Free,
                u => u,
            };
            if new == Use::Free {
                // Free once smoltcp is done with it (Releasing until then).
                self.release(i);
            } else if new != u {
                self.set_use(i, new);
            }
            if let Use::Pending(l) = new {
                ready[l as usize] |= acceptable(st);
                if st == tcp::State::SynReceived {
                    let t = self.since[i] + HALF_OPEN_US + 1;
                    half_open = Some(half_open.map_or(t, |a| a.min(t)));
                }
            }
        }
        self.half_open_at = half_open;
        for (l, slot) in self.listeners.iter_mut().enumerate() {
            let Some(lis) = slot.as_mut().filter(|_| ready[l]) else { continue };
            for w in lis.waiters.iter_mut() {
                if let Some(w) = w.take() {
                    w.wake();
                }
            }
        }
    }

    pub fn in_use(&self) -> usize {
        self.uses.iter().filter(|&&u| u != Use::Free).count()
    }
}
