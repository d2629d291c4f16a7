//! The accept loop's limits, against real sockets: a head that never ends, a body sent a
//! byte at a time, one address opening too many connections, a port at its cap. Every wait
//! is bounded by a read timeout.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::routing::{get, post};
use axum::Router;
use fairloom_serve::{serve, Limits};

struct Server {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn start(limits: Limits) -> Server {
    let router = Router::new()
        .route("/peer", get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move { peer.ip().to_string() }))
        .route("/echo", post(|body: String| async move { body }))
        .route("/big", get(|| async { vec![b'x'; 32 << 20] }));
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            addr_tx.send(listener.local_addr().unwrap()).unwrap();
            serve("test", listener, router, limits, async move {
                let _ = stopped.await;
            })
            .await;
        });
    });
    let addr = addr_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    Server { addr, stop: Some(stop), thread: Some(thread) }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// What the server sends until it closes or goes quiet for the read timeout.
fn read_some(s: &mut TcpStream) -> (String, bool) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&out).into_owned(), true),
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if out.windows(4).any(|w| w == b"\r\n\r\n") && !out.ends_with(b"\r\n\r\n") {
                    return (String::from_utf8_lossy(&out).into_owned(), false);
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return (String::from_utf8_lossy(&out).into_owned(), false)
            }
            Err(_) => return (String::from_utf8_lossy(&out).into_owned(), true),
        }
    }
}

fn get_peer(s: &mut TcpStream) -> String {
    s.write_all(b"GET /peer HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    read_some(s).0
}

fn short(header: u64, request: u64) -> Limits {
    Limits::new(16).timeouts(Duration::from_millis(header), Duration::from_millis(request))
}

#[test]
fn a_head_that_never_ends_is_closed() {
    let server = start(short(300, 10_000));
    let mut s = connect(server.addr);
    s.write_all(b"GET /peer HTTP/1.1\r\nhost: x\r\n").unwrap();
    let (text, closed) = read_some(&mut s);
    assert!(closed, "the connection is closed after the header timeout: {text:?}");
    // A well-behaved client on a fresh connection is answered, with its address.
    let mut ok = connect(server.addr);
    let answer = get_peer(&mut ok);
    assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("127.0.0.1"), "{answer}");
}

#[test]
fn a_body_sent_a_byte_at_a_time_gets_408() {
    let server = start(short(10_000, 400));
    let mut s = connect(server.addr);
    s.write_all(b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\na").unwrap();
    let (text, _) = read_some(&mut s);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("within 0 s") || text.contains("not read and answered"), "{text}");
}

#[test]
fn one_address_gets_its_share_and_no_more() {
    let server = start(short(10_000, 10_000).per_peer(2));
    let mut a = connect(server.addr);
    let mut b = connect(server.addr);
    assert!(get_peer(&mut a).starts_with("HTTP/1.1 200"));
    assert!(get_peer(&mut b).starts_with("HTTP/1.1 200"));
    let mut c = connect(server.addr);
    let _ = c.write_all(b"GET /peer HTTP/1.1\r\nhost: x\r\n\r\n");
    let (text, closed) = read_some(&mut c);
    assert!(closed && text.is_empty(), "the third is closed unanswered: {text:?}");
    drop(a);
    // The seat is given back once the server sees the close; retry for a bounded while.
    let answered = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        let mut d = connect(server.addr);
        get_peer(&mut d).starts_with("HTTP/1.1 200")
    });
    assert!(answered, "a connection is taken again once one is closed");
    assert!(get_peer(&mut b).starts_with("HTTP/1.1 200"), "the others were untouched");
}

#[test]
fn a_port_at_its_cap_waits_for_a_connection_to_close() {
    let server = start(Limits::new(2).timeouts(Duration::from_secs(10), Duration::from_secs(10)));
    let mut a = connect(server.addr);
    let mut b = connect(server.addr);
    assert!(get_peer(&mut a).starts_with("HTTP/1.1 200"));
    assert!(get_peer(&mut b).starts_with("HTTP/1.1 200"));
    let mut c = connect(server.addr);
    c.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    c.write_all(b"GET /peer HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let (text, closed) = read_some(&mut c);
    assert!(text.is_empty() && !closed, "not served while two are open: {text:?}");
    drop(a);
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let (text, _) = read_some(&mut c);
    assert!(text.starts_with("HTTP/1.1 200"), "served once one closed: {text:?}");
}

#[test]
fn a_peer_that_takes_no_answer_frees_its_seat() {
    // One seat; the first client asks for 32 MiB (more than the socket buffers hold) and
    // reads nothing.
    let limits = Limits::new(1).timeouts(Duration::from_secs(10), Duration::from_secs(10));
    let server = start(limits.write_timeout(Duration::from_millis(500)));
    let mut stuck = connect(server.addr);
    stuck.write_all(b"GET /big HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    // The second is answered once the first's write has stalled for the timeout.
    let mut next = connect(server.addr);
    let answer = get_peer(&mut next);
    assert!(answer.starts_with("HTTP/1.1 200"), "the seat came back: {answer:?}");
    // The first was cut off: what it can still read ends before the whole answer.
    stuck.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = 0usize;
    let mut buf = vec![0u8; 1 << 16];
    while let Ok(n) = stuck.read(&mut buf) {
        if n == 0 {
            break;
        }
        got += n;
    }
    assert!(got < 32 << 20, "closed before the whole answer: {got} bytes");
}

#[test]
fn a_slow_reader_that_keeps_reading_keeps_its_seat() {
    // One seat, a 2 s write timeout; the first client takes its 32 MiB answer at about
    // 80 KB/s through a 64 KiB receive buffer: far slower than the kernel needs to call the
    // socket writable again (a third of a send buffer of megabytes drained, 16 s here)
    // within the timeout, but steady. (Its receive window opens a buffer's half at a time,
    // so progress comes in steps of most of a second; a much smaller buffer on loopback,
    // with its 64 KiB segments, slows TCP itself to a probe every few hundred ms.)
    let limits = Limits::new(1).timeouts(Duration::from_secs(20), Duration::from_secs(20));
    let server = start(limits.write_timeout(Duration::from_secs(2)));
    let slow = std::net::TcpStream::connect(server.addr).unwrap();
    {
        use std::os::fd::AsRawFd;
        let size: libc::c_int = 65536;
        // SAFETY: SO_RCVBUF reads one int.
        let rc = unsafe {
            libc::setsockopt(
                slow.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(rc, 0);
    }
    let mut slow = slow;
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    slow.write_all(b"GET /big HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let mut other = connect(server.addr);
    other.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
    other.write_all(b"GET /peer HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let mut buf = [0u8; 4096];
    // Six seconds, three timeouts' worth: the seat stays the slow reader's.
    for i in 0..120 {
        let mut got = 0;
        while got < 4096 {
            match slow.read(&mut buf[..4096 - got]) {
                Ok(0) => panic!("the slow reader was cut off"),
                Ok(n) => got += n,
                Err(e) => panic!("the slow reader was cut off: {e}"),
            }
        }
        if i % 10 == 0 {
            let (text, closed) = read_some(&mut other);
            assert!(text.is_empty() && !closed, "the seat was taken from a reader that reads: {text:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(slow);
    other.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let (text, _) = read_some(&mut other);
    assert!(text.starts_with("HTTP/1.1 200"), "served once the slow reader left: {text:?}");
}
