//! smoltcp's interface and TCP sockets, and what the server adds on top: who a socket belongs
//! to (free, listening for a port, established and waiting to be accepted, the client's, being
//! closed), a backlog of listening sockets per port kept topped up from the free ones, and the
//! accept queue. With no socket left to listen on, smoltcp answers a SYN with a reset: more
//! connections than sockets are refused, not queued.
//!
//! After each smoltcp run only the sockets whose use can have changed are looked at: waiting to
//! be accepted or being closed, and the listening ones only when a SYN came in (`Frames`).
//! An established connection the client owns is smoltcp's business alone.
use crate::frames::Frames;
use crate::local::Local;
use crate::nic::Driver;
use core::task::Waker;
use netproto::{MAX_BACKLOG, SOCKETS};
use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet, SocketStorage};
use smoltcp::socket::tcp;
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
    Free,
    /// In smoltcp's Listen state for listener l.
    Listening(u8),
    /// Left Listen (a connection is being set up or is up) and not yet accepted.
    Pending(u8),
    /// Accepted: the client's.
    Owned,
    /// The client closed it; free once smoltcp is done with the connection.
    Closing,
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
    pub set: SocketSet<'static>,
    handles: [SocketHandle; SOCKETS],
    pub uses: [Use; SOCKETS],
    /// When each Pending socket left Listen (smoltcp clock, microseconds).
    since: [i64; SOCKETS],
    listeners: [Option<Listener>; LISTENERS],
    /// Sockets Free, and Pending or Closing (the ones `maintain` looks at after every run).
    free: usize,
    watched: usize,
    /// When the oldest half-open connection reaches its limit (microseconds), if any.
    half_open_at: Option<i64>,
    /// Each socket's ACK delay (set when it starts listening).
    ack_delay: Option<Duration>,
    pub stats: StackStats,
}

static mut STORAGE: [SocketStorage<'static>; SOCKETS] = [SocketStorage::EMPTY; SOCKETS];
static mut RX_BUFS: [[u8; SOCK_BUF]; SOCKETS] = [[0; SOCK_BUF]; SOCKETS];
static mut TX_BUFS: [[u8; SOCK_BUF]; SOCKETS] = [[0; SOCK_BUF]; SOCKETS];

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

/// Build the interface and every socket. Called once, before the executor runs.
pub fn init(
    nic: &'static dyn Driver,
    ip: [u8; 4],
    prefix: u8,
    gateway: [u8; 4],
    now: Instant,
    seed: u64,
    ack_delay: Option<Duration>,
) {
    let mut config = Config::new(HardwareAddress::Ethernet(EthernetAddress(nic.mac())));
    config.random_seed = seed;
    let mut iface = Interface::new(config, &mut Frames::new(nic), now);
    iface.update_ip_addrs(|a| {
        let _ = a.push(IpCidr::new(IpAddress::Ipv4(Ipv4Address::from(ip)), prefix));
    });
    let _ = iface.routes_mut().add_default_ipv4_route(Ipv4Address::from(gateway));
    // SAFETY: init runs once, before anything else can reach these statics; from here on
    // they are reachable only through the socket set.
    let (storage, rx, tx) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(STORAGE),
            &mut *core::ptr::addr_of_mut!(RX_BUFS),
            &mut *core::ptr::addr_of_mut!(TX_BUFS),
        )
    };
    let mut set = SocketSet::new(&mut storage[..]);
    let mut handles = [SocketHandle::default(); SOCKETS];
    for ((h, r), t) in handles.iter_mut().zip(rx.iter_mut()).zip(tx.iter_mut()) {
        *h = set.add(tcp::Socket::new(tcp::SocketBuffer::new(&mut r[..]), tcp::SocketBuffer::new(&mut t[..])));
    }
    let stack = Stack {
        iface,
        set,
        handles,
        uses: [Use::Free; SOCKETS],
        since: [0; SOCKETS],
        listeners: [const { None }; LISTENERS],
        free: SOCKETS,
        watched: 0,
        half_open_at: None,
        ack_delay,
        stats: StackStats::default(),
    };
    STACK.with(|s| *s = Some(stack));
}

/// A connection the client can take: the handshake is done (the peer may have closed its side
/// already; its data is still there to read).
fn acceptable(st: tcp::State) -> bool {
    matches!(st, tcp::State::Established | tcp::State::CloseWait)
}

impl Stack {
    pub fn tcp(&mut self, sock: usize) -> &mut tcp::Socket<'static> {
        self.set.get_mut::<tcp::Socket>(self.handles[sock])
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
        self.maintain(now.total_micros(), false);
        Ok(i)
    }

    pub fn is_listener(&self, l: usize) -> bool {
        self.listeners.get(l).is_some_and(|l| l.is_some())
    }

    /// An accepted connection of listener `l`, if one is up: (socket, remote address, port).
    /// Otherwise `waker` is kept and woken when one comes.
    pub fn accept(&mut self, l: usize, waker: &Waker) -> Option<(usize, u32, u16)> {
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
        let u = if s.state() == tcp::State::Closed { Use::Free } else { Use::Closing };
        self.set_use(sock, u);
    }

    /// Socket `i`'s use becomes `u`, and the counts follow.
    fn set_use(&mut self, i: usize, u: Use) {
        let old = core::mem::replace(&mut self.uses[i], u);
        self.count(old, false);
        self.count(u, true);
    }

    fn count(&mut self, u: Use, add: bool) {
        let n = match u {
            Use::Free => &mut self.free,
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
    /// past their limit go first, before a SYN among the frames looks for a socket.
    pub fn poll(&mut self, now: Instant, nic: &dyn Driver) {
        let t = now.total_micros();
        if self.half_open_at.is_some_and(|at| at <= t) {
            self.maintain(t, false);
        }
        let mut dev = Frames::new(nic);
        self.iface.poll(now, &mut dev, &mut self.set);
        self.maintain(t, dev.syn_seen());
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
    fn maintain(&mut self, now: i64, syn: bool) {
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
                if self.uses[i] == Use::Free {
                    let s = self.tcp(i);
                    // Request/response traffic: no Nagle; ACKs as `ack_delay` says.
                    s.set_nagle_enabled(false);
                    s.set_ack_delay(ack_delay);
                    if s.listen(port).is_ok() {
                        self.set_use(i, Use::Listening(l as u8));
                        missing -= 1;
                    }
                }
                i += 1;
            }
        }
    }

    /// The sockets whose use may have changed: Pending and Closing ones, Listening ones if `syn`.
    fn scan(&mut self, now: i64, syn: bool) {
        // Listeners with a connection up and waiting to be accepted.
        let mut ready = [false; LISTENERS];
        let mut half_open: Option<i64> = None;
        for i in 0..SOCKETS {
            let u = self.uses[i];
            let look = match u {
                Use::Pending(_) | Use::Closing => true,
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
                u => u,
            };
            if new != u {
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
