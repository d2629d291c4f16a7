//! The accept loop every fairloom HTTP port runs (the RM's web, resource-tracker and AM ports;
//! the NodeManager's port).
//!
//! axum's own `serve` keeps a connection for as long as the peer likes: a client that opens
//! thousands of sockets and never finishes a request holds as many file descriptors, until
//! the process can open no file and the port answers nobody. Here each port has
//!
//! - a cap on open connections: past it the port stops accepting until one closes (new
//!   clients wait in the kernel's backlog rather than being refused), so one port cannot use
//!   up the descriptors the others, the store and the logs need;
//! - optionally a cap per peer: a new connection past it is closed at once, so one host
//!   cannot take the port's whole share;
//! - a header timeout: a request's head, and on a keep-alive connection the next request,
//!   must arrive within it, else the connection is closed (Jetty's idle timeout, in Hadoop);
//! - a request timeout: a handler, reading the body included, answers within it or the
//!   caller gets 408, so a body sent a byte at a time does not hold a connection;
//! - a write timeout: an answer the peer takes nothing of for that long (requests pipelined
//!   and answers never read) closes the connection; a slow reader that keeps reading keeps it.
//!
//! Peers are counted by address, with every loopback address one peer and an IPv6 address by
//! its /64 (what one host is usually given), so a host cannot pass its cap by using more of
//! its own addresses. On shutdown requests in flight get [`DRAIN`] to finish.
//!
//! Handlers see the peer as axum's `ConnectInfo<SocketAddr>`, as with
//! `into_make_service_with_connect_info`.

mod budget;

pub use budget::{refusal_may_be_logged, REFUSAL_LINES_PER_SECOND};

/// `s` as HTML text or an attribute value: the pages both the RM and the NodeManager serve
/// show names and file contents that callers chose.
pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, Response, StatusCode};
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tower::ServiceExt;

/// Descriptors kept out of every port's share: the store, log files, container pipes.
pub const RESERVED_FILES: u64 = 256;

/// The fewest connections a port is given whatever the descriptor limit.
pub const MIN_CONNECTIONS: usize = 64;

/// How long connections still open at shutdown are given to finish their requests.
pub const DRAIN: Duration = Duration::from_secs(10);

/// What one port allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_connections: usize,
    /// `None`: no cap per address (ports every NM or AM of one host shares).
    pub per_peer: Option<usize>,
    pub header_timeout: Duration,
    pub request_timeout: Duration,
    pub write_timeout: Duration,
}

impl Limits {
    /// `max_connections` open at once, no per-peer cap, a 30 s header timeout (hyper's
    /// default once a timer is set), a 60 s request timeout and a 30 s write timeout.
    pub fn new(max_connections: usize) -> Self {
        Self {
            max_connections: max_connections.max(1),
            per_peer: None,
            header_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(60),
            write_timeout: Duration::from_secs(30),
        }
    }

    /// A cap per peer address; 0 means none.
    pub fn per_peer(self, cap: usize) -> Self {
        Self { per_peer: (cap > 0).then_some(cap), ..self }
    }

    pub fn timeouts(self, header: Duration, request: Duration) -> Self {
        Self { header_timeout: header, request_timeout: request, ..self }
    }

    pub fn write_timeout(self, write: Duration) -> Self {
        Self { write_timeout: write, ..self }
    }
}

/// Raises the soft open-files limit to the hard one, as the JVM does for Hadoop's daemons,
/// and returns the soft limit now (what the connection shares are cut from).
pub fn raise_open_files_limit() -> u64 {
    // SAFETY: getrlimit and setrlimit read and write only the struct passed.
    unsafe {
        let mut l = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) != 0 {
            return 1024;
        }
        if l.rlim_cur < l.rlim_max {
            let raised = libc::rlimit { rlim_cur: l.rlim_max, rlim_max: l.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                l.rlim_cur = l.rlim_max;
            }
        }
        l.rlim_cur
    }
}

/// A port's share of the open-files limit `limit`: `numerator / denominator` of what is left
/// after [`RESERVED_FILES`], and never fewer than [`MIN_CONNECTIONS`].
pub fn connection_share(limit: u64, numerator: u64, denominator: u64) -> usize {
    let left = limit.saturating_sub(RESERVED_FILES);
    let share = left.saturating_mul(numerator) / denominator.max(1);
    usize::try_from(share).unwrap_or(usize::MAX).max(MIN_CONNECTIONS)
}

/// Serves `router` on `listener` within `limits` until `shutdown` resolves; then accepts no
/// more, closes idle connections, and returns when every connection has closed or after
/// [`DRAIN`]. `name` names the port in log lines.
pub async fn serve(
    name: &'static str,
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let open = Arc::new(Semaphore::new(limits.max_connections));
    let peers: Peers = Arc::default();
    let (closing_tx, closing) = watch::channel(false);
    let mut accept_failing = false;
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = open.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors (or memory): wait for some to close rather than spin.
                    if !accept_failing {
                        tracing::warn!(port = name, error = %e, "cannot accept connections; retrying");
                        accept_failing = true;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        accept_failing = false;
        let Some(seat) = Seat::take(&peers, peer_key(peer.ip()), limits.per_peer, name) else {
            drop(stream);
            continue;
        };
        let conn = connection(stream, peer, router.clone(), limits, closing.clone());
        tokio::spawn(async move {
            conn.await;
            drop(seat);
            drop(permit);
        });
    }
    let _ = closing_tx.send(true);
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    // A peer that holds its connection past the drain (reading nothing) does not hold the
    // process: its task is dropped with the runtime.
    if tokio::time::timeout(DRAIN, open.acquire_many(all)).await.is_err() {
        tracing::warn!(port = name, "connections still open after the drain were left to close with the process");
    }
}

/// Whom a connection is counted against: one peer for every loopback address, an IPv6
/// address by its /64, an IPv4-mapped IPv6 address as its IPv4 address.
pub fn peer_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) if v4.is_loopback() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => peer_key(IpAddr::V4(v4)),
            None if v6.is_loopback() => IpAddr::V6(v6),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    limits: Limits,
    mut closing: watch::Receiver<bool>,
) {
    let request_timeout = limits.request_timeout;
    let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        let answer = router.clone().oneshot(req.map(Body::new));
        async move {
            match tokio::time::timeout(request_timeout, answer).await {
                Ok(answer) => answer,
                Err(_) => Ok::<_, Infallible>(timed_out(request_timeout)),
            }
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
    let stream = Stalling { inner: stream, stall: limits.write_timeout, timer: None, queued: 0 };
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let close = async move {
        let _ = closing.wait_for(|c| *c).await;
    };
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = close => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

/// A stream whose writes must make progress: a write or flush that cannot go on for `stall`
/// fails, and hyper closes the connection, unless the peer took at least [`MIN_PROGRESS`] of
/// what was queued meanwhile. The kernel says a socket is writable again only once a third
/// of its send buffer (megabytes) has drained, which takes a slow but honest reader longer
/// than the stall; what the send queue still holds (`TIOCOUTQ`) tells it from one that
/// reads nothing.
struct Stalling {
    inner: TcpStream,
    stall: Duration,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Bytes in the send queue when the timer started.
    queued: usize,
}

/// What a peer must take of its answer in each stall period to keep its connection.
pub const MIN_PROGRESS: usize = 1024;

/// Bytes written to `stream` and not yet acknowledged by the peer (0 if unknown).
fn unsent(stream: &TcpStream) -> usize {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: TIOCOUTQ writes one int into `n`.
    let rc = unsafe { libc::ioctl(stream.as_raw_fd(), libc::TIOCOUTQ, &mut n) };
    if rc == 0 {
        usize::try_from(n).unwrap_or(0)
    } else {
        0
    }
}

impl Stalling {
    /// After the inner stream said Pending: Pending while the peer takes its answer, an
    /// error once it has taken too little of it for a whole stall period.
    fn stalled<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        loop {
            if self.timer.is_none() {
                self.queued = unsent(&self.inner);
                self.timer = Some(Box::pin(tokio::time::sleep(self.stall)));
            }
            let timer = self.timer.as_mut().expect("just set");
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let left = unsent(&self.inner);
            if self.queued > 0 && left + MIN_PROGRESS.min(self.queued) <= self.queued {
                self.timer = None;
                continue;
            }
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the peer took nothing of the answer for {} s", self.stall.as_secs()),
            )));
        }
    }

    fn progressed<T>(&mut self, r: Poll<io::Result<T>>, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        match r {
            Poll::Ready(r) => {
                self.timer = None;
                Poll::Ready(r)
            }
            Poll::Pending => self.stalled(cx),
        }
    }
}

impl AsyncRead for Stalling {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Stalling {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.progressed(r, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.progressed(r, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        self.progressed(r, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.progressed(r, cx)
    }
}

fn timed_out(after: Duration) -> Response<Body> {
    let mut r =
        Response::new(Body::from(format!("the request was not read and answered within {} s\n", after.as_secs())));
    *r.status_mut() = StatusCode::REQUEST_TIMEOUT;
    r
}

/// Open connections per peer address, and whether its refusal has been logged since it was
/// last under its cap (one warning per burst, not one per connection).
type Peers = Arc<Mutex<HashMap<IpAddr, (usize, bool)>>>;

/// One open connection counted against its peer; the count drops when the seat does.
struct Seat {
    peers: Peers,
    ip: IpAddr,
}

impl Seat {
    fn take(peers: &Peers, ip: IpAddr, cap: Option<usize>, port: &'static str) -> Option<Self> {
        let mut map = peers.lock().unwrap_or_else(|p| p.into_inner());
        let (count, warned) = map.entry(ip).or_default();
        if cap.is_some_and(|cap| *count >= cap) {
            if !*warned {
                *warned = true;
                tracing::warn!(port, peer = %ip, open = *count, "refused a connection: this address has its share open");
            }
            return None;
        }
        *count += 1;
        *warned = false;
        Some(Self { peers: peers.clone(), ip })
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut map = self.peers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((count, _)) = map.get_mut(&self.ip) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                map.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_host_is_one_peer() {
        let key = |s: &str| peer_key(s.parse().unwrap()).to_string();
        assert_eq!(key("127.0.0.1"), "127.0.0.1");
        assert_eq!(key("127.0.0.5"), "127.0.0.1", "all of 127/8 is this host");
        assert_eq!(key("10.1.2.3"), "10.1.2.3");
        assert_eq!(key("::ffff:127.0.0.9"), "127.0.0.1");
        assert_eq!(key("::ffff:10.1.2.3"), "10.1.2.3");
        assert_eq!(key("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::");
        assert_eq!(key("::1"), "::1");
    }

    #[test]
    fn shares_are_cut_after_the_reserve() {
        assert_eq!(connection_share(20_000, 1, 2), (20_000 - 256) / 2);
        assert_eq!(connection_share(1024, 1, 8), 96);
        assert_eq!(connection_share(600, 1, 8), MIN_CONNECTIONS);
        assert_eq!(connection_share(100, 1, 2), MIN_CONNECTIONS);
        assert_eq!(connection_share(u64::MAX, 1, 1), usize::try_from(u64::MAX - 256).unwrap_or(usize::MAX));
    }
}
