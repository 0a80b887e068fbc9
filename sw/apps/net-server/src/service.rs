//! The socket requests a client sends over the channel (`netproto::label`), each answered at
//! once when it can be (`now`), kept for the poller (`now_keeping`), or given a handler task.
//! Handlers that must wait (ACCEPT, RECV, SEND) register with smoltcp's socket wakers or the
//! listener and sleep; whatever changes a socket kicks the poller so smoltcp sends it.
//! Every number in a request is checked here: socket, listener, offset and length.
use crate::local::Local;
use crate::poller::kick;
use crate::stack::{self, Use};
use crate::{nic_stats, DATA};
use core::future::poll_fn;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::task::{Poll, RawWaker, RawWakerVTable, Waker};
use netproto::{error, label, rx_offset, tx_offset, BUF_BYTES, OK, SOCKETS};
use smoltcp::socket::tcp;
use userlib::chan::{Msg, Owed};

fn reply(label: u32, words: &[u64]) -> Msg {
    Msg::new(label, words).unwrap_or_default()
}

fn err(code: u32) -> Msg {
    reply(code, &[])
}

/// A socket number the client may use, and a range of its buffer: (socket, offset, length).
fn span(m: &Msg) -> Option<(usize, usize, usize)> {
    let sock = m.word(0) as usize;
    let (off, len) = range(m.word(1), m.word(2))?;
    (sock < SOCKETS).then_some((sock, off, len))
}

/// A SENDRECV's socket and two ranges: (socket, send offset, n, receive offset, max).
fn spans(m: &Msg) -> Option<(usize, usize, usize, usize, usize)> {
    let (sock, send_off, n) = span(m)?;
    let (recv_off, max) = range(m.word(3), m.word(4))?;
    Some((sock, send_off, n, recv_off, max))
}

/// A range of a socket's buffer in the data area: (offset, length), 1..=BUF_BYTES long.
fn range(off: u64, len: u64) -> Option<(usize, usize)> {
    let (off, len) = (off as usize, len as usize);
    (len > 0 && len <= BUF_BYTES && off <= BUF_BYTES - len).then_some((off, len))
}

/// A request answered right away, if it can be: everything but an ACCEPT, or a RECV or SEND
/// that would wait (no data, no room), which `handle` takes in a task of its own.
pub fn now(m: &Msg) -> Option<Msg> {
    match m.label {
        label::LISTEN => Some(listen(m.word(0), m.word(1))),
        label::RECV => match span(m) {
            Some((s, off, len)) => recv_once(s, off, len, None),
            None => Some(err(error::BAD_ARGUMENT)),
        },
        label::SEND => match span(m) {
            Some((s, off, len)) => send_once(s, off, len, None),
            None => Some(err(error::BAD_ARGUMENT)),
        },
        label::CLOSE => Some(close(m.word(0) as usize)),
        label::STATS => Some(stats()),
        // Its RECV nearly always waits (for the client's next request): a task at once.
        label::SENDRECV => spans(m).is_none().then(|| err(error::BAD_ARGUMENT)),
        // A connection already up (a burst of them, after the first) is taken at once.
        label::ACCEPT => accept_now(m.word(0) as usize),
        _ => Some(err(error::BAD_LABEL)),
    }
}

/// The async variant's `now` (`chan::Server::serve_keeping`): as [`now`], and a SENDRECV whose
/// bytes all fit in smoltcp's send buffer is sent at once and, when its RECV must wait, kept
/// (what it is `Owed` taken) for the poller to answer after a smoltcp run brings data
/// ([`answer_kept`]): no task per request. One that must wait for room gets a task (`handle`).
pub fn now_keeping(m: &Msg, owed: &mut Option<Owed>) -> Option<Msg> {
    BACK.store(BACK.load(Ordering::Relaxed).saturating_sub(1), Ordering::Relaxed);
    match m.label {
        label::SENDRECV => match spans(m) {
            Some((s, send_off, n, recv_off, max)) => send_recv_now(s, send_off, n, recv_off, max, owed),
            None => Some(err(error::BAD_ARGUMENT)),
        },
        // A RECV that must wait (a connection's first request, not there yet) is kept too.
        label::RECV => match span(m) {
            Some((s, off, len)) => recv_or_keep(s, off, len, owed),
            None => Some(err(error::BAD_ARGUMENT)),
        },
        _ => now(m),
    }
}

/// A RECV answered at once, or kept for the poller ([`answer_kept`]) when it must wait; one
/// on a socket that has one kept already gets a task.
fn recv_or_keep(sock: usize, off: usize, max: usize, owed: &mut Option<Owed>) -> Option<Msg> {
    if KEPT.with(|k| k.by_sock[sock].is_some()) {
        return None;
    }
    recv_once(sock, off, max, Some(&kept_waker())).or_else(|| keep(sock, off, max, owed))
}

/// Keep the RECV of socket `sock` (what it is owed taken from `owed`) for the poller.
fn keep(sock: usize, off: usize, max: usize, owed: &mut Option<Owed>) -> Option<Msg> {
    // Always there from `serve_keeping` (without it the request would be answered twice).
    let Some(owed) = owed.take() else { return Some(err(error::BAD_ARGUMENT)) };
    KEPT.with(|k| {
        k.by_sock[sock] = Some(Kept { owed, off, max });
        k.count += 1;
    });
    None
}

/// Kept RECVs answered (`answer_kept`) whose client has not sent us anything since: its next
/// SENDRECV (or CLOSE) is on the way, most likely. The poller's gathering of replies.
pub static BACK: AtomicUsize = AtomicUsize::new(0);

/// A SENDRECV's RECV kept for the poller: what it is owed and the receive range.
struct Kept {
    owed: Owed,
    off: usize,
    max: usize,
}

/// The kept SENDRECVs, one a socket at most, and how many there are (the poller's look after
/// each smoltcp run costs nothing while none is kept, as in the sync variant).
struct KeptTable {
    by_sock: [Option<Kept>; SOCKETS],
    count: usize,
}

static KEPT: Local<KeptTable> = Local::new(KeptTable { by_sock: [const { None }; SOCKETS], count: 0 });

fn send_recv_now(
    sock: usize,
    send_off: usize,
    n: usize,
    recv_off: usize,
    max: usize,
    owed: &mut Option<Owed>,
) -> Option<Msg> {
    // A second SENDRECV on a socket whose first still waits (the client's mistake): a task.
    if KEPT.with(|k| k.by_sock[sock].is_some()) {
        return None;
    }
    let src = DATA.load(core::sync::atomic::Ordering::Relaxed) + tx_offset(sock) + send_off;
    let sent = stack::with(|s| {
        if !owned(s, sock) {
            return Some(Err(err(error::BAD_SOCKET)));
        }
        let t = s.tcp(sock);
        if !t.may_send() {
            return Some(Err(err(error::RESET)));
        }
        if t.send_capacity() - t.send_queue() < n {
            return None;
        }
        // Twice at most: the free part of smoltcp's ring may wrap.
        let mut done = 0;
        while done < n {
            let got = t.send(|b| {
                let k = b.len().min(n - done);
                // SAFETY: [src + done, src + n) lies in the socket's send buffer of the data
                // area (checked by `spans`); what the client writes there meanwhile is its own
                // business.
                unsafe { core::ptr::copy_nonoverlapping((src + done) as *const u8, b.as_mut_ptr(), k) };
                (k, k)
            });
            match got {
                Ok(k) if k > 0 => done += k,
                _ => return Some(Err(err(error::RESET))),
            }
        }
        Some(Ok(()))
    });
    match sent? {
        Err(m) => return Some(m),
        Ok(()) => kick(),
    }
    recv_once(sock, recv_off, max, Some(&kept_waker())).or_else(|| keep(sock, recv_off, max, owed))
}

/// A kept RECV's socket had something happen that smoltcp wakes a reader for (data, end of
/// stream, reset, a timeout): set by [`kept_waker`], registered as the socket's receive waker
/// when the RECV is kept.
static KEPT_WOKEN: AtomicBool = AtomicBool::new(false);

static KEPT_VTABLE: RawWakerVTable =
    RawWakerVTable::new(|p| RawWaker::new(p, &KEPT_VTABLE), kept_wake, kept_wake, |_| {});

/// A task waited to receive on a socket whose RECV was kept (a client that sent a second
/// SENDRECV before the first's answer): its waker took the kept one's place, so from then on
/// every run looks (it stays set: only a misbehaving client gets here).
static KEPT_SHARED: AtomicBool = AtomicBool::new(false);

fn kept_wake(_: *const ()) {
    KEPT_WOKEN.store(true, Ordering::Relaxed);
}

/// The receive waker of a socket whose RECV is kept: it only sets [`KEPT_WOKEN`] (there is no
/// task to run: the poller answers).
fn kept_waker() -> Waker {
    // SAFETY: the vtable's functions copy the (unused) pointer or set a flag.
    unsafe { Waker::from_raw(RawWaker::new(core::ptr::null(), &KEPT_VTABLE)) }
}

/// After a smoltcp run (the poller): answer every kept SENDRECV whose RECV can be answered now
/// (data came, the peer closed, the socket was reset or closed by the client). Looked for only
/// after `frames` came in, or when a kept socket's receive waker fired (a state change
/// outside the frames, such as a timeout in the egress pass): nothing else makes one
/// answerable (the client's CLOSE answers its own). True if any was answered.
pub fn answer_kept(frames: bool) -> bool {
    if !(KEPT_WOKEN.swap(false, Ordering::Relaxed) || frames || KEPT_SHARED.load(Ordering::Relaxed)) {
        return false;
    }
    let mut answered = false;
    let mut left = KEPT.with(|k| k.count);
    let mut sock = 0;
    while left > 0 && sock < SOCKETS {
        if let Some((off, max)) = KEPT.with(|k| k.by_sock[sock].as_ref().map(|k| (k.off, k.max))) {
            left -= 1;
            // Not answerable yet (a wake-up without data): the waker again, for the next one
            // (unless a task may wait on the socket too: then every run looks anyway).
            let w = (!KEPT_SHARED.load(Ordering::Relaxed)).then(kept_waker);
            if let Some(m) = recv_once(sock, off, max, w.as_ref()) {
                let kept = KEPT.with(|k| {
                    k.count -= 1;
                    k.by_sock[sock].take()
                });
                if let Some(kept) = kept {
                    crate::SERVER.answer(kept.owed, m);
                    answered = true;
                    BACK.store(BACK.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                }
            }
        }
        sock += 1;
    }
    answered
}

pub async fn handle(m: Msg) -> Msg {
    match m.label {
        label::LISTEN => listen(m.word(0), m.word(1)),
        label::ACCEPT => accept(m.word(0) as usize).await,
        label::RECV => match span(&m) {
            Some((s, off, len)) => recv(s, off, len).await,
            None => err(error::BAD_ARGUMENT),
        },
        label::SEND => match span(&m) {
            Some((s, off, len)) => send(s, off, len).await,
            None => err(error::BAD_ARGUMENT),
        },
        label::CLOSE => close(m.word(0) as usize),
        label::STATS => stats(),
        label::SENDRECV => match spans(&m) {
            Some((s, send_off, n, recv_off, max)) => send_recv(s, send_off, n, recv_off, max).await,
            None => err(error::BAD_ARGUMENT),
        },
        _ => err(error::BAD_LABEL),
    }
}

fn listen(port: u64, backlog: u64) -> Msg {
    let (Ok(port), Ok(backlog)) = (u16::try_from(port), usize::try_from(backlog)) else {
        return err(error::BAD_ARGUMENT);
    };
    let now = crate::clock::now();
    let r = stack::with(|s| s.listen(port, backlog, now));
    match r {
        Ok(l) => {
            kick();
            reply(OK, &[l as u64])
        }
        Err(e) => err(e),
    }
}

async fn accept(l: usize) -> Msg {
    if !stack::with(|s| s.is_listener(l)) {
        return err(error::BAD_SOCKET);
    }
    let c = poll_fn(|cx| match stack::with(|s| s.accept(l, Some(cx.waker()))) {
        Some(c) => Poll::Ready(c),
        None => Poll::Pending,
    })
    .await;
    accepted(c)
}

/// An ACCEPT answered at once if a connection is up (or the listener is bad); None: a task
/// waits for one.
fn accept_now(l: usize) -> Option<Msg> {
    match stack::with(|s| s.is_listener(l).then(|| s.accept(l, None))) {
        None => Some(err(error::BAD_SOCKET)),
        Some(c) => c.map(accepted),
    }
}

fn accepted((sock, addr, port): (usize, u32, u16)) -> Msg {
    // The listener lent a socket: top its backlog up.
    kick();
    reply(OK, &[sock as u64, addr as u64, port as u64])
}

fn owned(s: &mut stack::Stack, sock: usize) -> bool {
    s.uses[sock] == Use::Owned
}

async fn recv(sock: usize, off: usize, max: usize) -> Msg {
    if KEPT.with(|k| k.by_sock.get(sock).is_some_and(|k| k.is_some())) {
        KEPT_SHARED.store(true, Ordering::Relaxed);
    }
    poll_fn(|cx| recv_once(sock, off, max, Some(cx.waker())).map_or(Poll::Pending, Poll::Ready)).await
}

async fn send(sock: usize, off: usize, len: usize) -> Msg {
    poll_fn(|cx| send_once(sock, off, len, Some(cx.waker())).map_or(Poll::Pending, Poll::Ready)).await
}

/// All `n` bytes sent (as room comes), then a RECV: SENDRECV's reply is the RECV's.
async fn send_recv(sock: usize, send_off: usize, n: usize, recv_off: usize, max: usize) -> Msg {
    let mut sent = 0;
    while sent < n {
        let r = send(sock, send_off + sent, n - sent).await;
        match r.word(0) as usize {
            k if r.label == OK && (1..=n - sent).contains(&k) => sent += k,
            // An error, or nothing taken (which `send_once` never answers): no RECV.
            _ if r.label != OK => return r,
            _ => return err(error::RESET),
        }
    }
    recv(sock, recv_off, max).await
}

/// A RECV into the socket's receive buffer in the data area at `off`, up to `max` bytes: its
/// reply, or None when there is nothing to read yet (`waker` woken when there is).
fn recv_once(sock: usize, off: usize, max: usize, waker: Option<&Waker>) -> Option<Msg> {
    let dst = DATA.load(core::sync::atomic::Ordering::Relaxed) + rx_offset(sock) + off;
    let (r, kick_poller) = stack::with(|s| {
        if !owned(s, sock) {
            return (Some(err(error::BAD_SOCKET)), true);
        }
        let t = s.tcp(sock);
        if t.can_recv() {
            // The read widens the window, which smoltcp then announces, only if it doubles
            // what smoltcp last announced: never when the buffer was at most half full, so
            // such a read needs no smoltcp run of its own (the next frame's takes it along).
            let widens = t.recv_queue() > t.recv_capacity() / 2;
            let got = t.recv(|b| {
                let n = b.len().min(max);
                // SAFETY: [dst, dst + n) lies in the socket's receive buffer of the data
                // area (`span` checked off + max <= BUF_BYTES), mapped read-write here;
                // the client may read it at any time, which only ever shows it bytes.
                unsafe { core::ptr::copy_nonoverlapping(b.as_ptr(), dst as *mut u8, n) };
                (n, n)
            });
            return match got {
                Ok(n) => (Some(reply(OK, &[n as u64])), widens),
                Err(_) => (Some(err(error::RESET)), true),
            };
        }
        if !t.may_recv() {
            // Closed: reset; otherwise the peer sent FIN: end of stream.
            let m = if t.state() == tcp::State::Closed { err(error::RESET) } else { reply(OK, &[0]) };
            return (Some(m), true);
        }
        if let Some(w) = waker {
            t.register_recv_waker(w);
        }
        (None, false)
    });
    if kick_poller {
        kick();
    }
    r
}

/// A SEND of `len` bytes from the socket's send buffer in the data area at `off`: its reply,
/// or None when smoltcp has no room yet (`waker` woken when it has).
fn send_once(sock: usize, off: usize, len: usize, waker: Option<&Waker>) -> Option<Msg> {
    let src = DATA.load(core::sync::atomic::Ordering::Relaxed) + tx_offset(sock) + off;
    let r = stack::with(|s| {
        if !owned(s, sock) {
            return Some(err(error::BAD_SOCKET));
        }
        let t = s.tcp(sock);
        if !t.may_send() {
            return Some(err(error::RESET));
        }
        if !t.can_send() {
            if let Some(w) = waker {
                t.register_send_waker(w);
            }
            return None;
        }
        let sent = t.send(|b| {
            let n = b.len().min(len);
            // SAFETY: [src, src + n) lies in the socket's send buffer (checked by `span`);
            // what the client writes there meanwhile is its own business.
            unsafe { core::ptr::copy_nonoverlapping(src as *const u8, b.as_mut_ptr(), n) };
            (n, n)
        });
        Some(match sent {
            Ok(n) => reply(OK, &[n as u64]),
            Err(_) => err(error::RESET),
        })
    });
    finished(r)
}

/// A SEND that finished lets the poller run smoltcp again: it has data to send.
fn finished(r: Option<Msg>) -> Option<Msg> {
    if r.is_some() {
        kick();
    }
    r
}

fn close(sock: usize) -> Msg {
    if sock >= SOCKETS {
        return err(error::BAD_ARGUMENT);
    }
    let ok = stack::with(|s| {
        if !owned(s, sock) {
            return false;
        }
        s.close(sock);
        true
    });
    if !ok {
        return err(error::BAD_SOCKET);
    }
    // A SENDRECV kept on it ends now, before the socket can serve another connection.
    if let Some(k) = KEPT.with(|k| k.by_sock[sock].take().inspect(|_| k.count -= 1)) {
        crate::SERVER.answer(k.owed, err(error::BAD_SOCKET));
    }
    kick();
    reply(OK, &[])
}

fn stats() -> Msg {
    let (accepted, in_use) = stack::with(|s| (s.stats.accepted, s.in_use()));
    let n = nic_stats();
    reply(OK, &[accepted, n.rx_frames, n.rx_dropped, n.tx_frames, in_use as u64])
}
