//! The RM's web port is open to anyone, so one address may hold only its share of
//! connections there (`fairloom.webapp.max-connections-per-peer`); the others keep being
//! answered, and the trackers' port, which NMs share, has no such cap.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use support::start;

fn ask(stream: &mut TcpStream) -> String {
    let _ = stream.write_all(b"GET /ws/v1/cluster/info HTTP/1.1\r\nhost: x\r\n\r\n");
    let mut buf = [0u8; 512];
    match stream.read(&mut buf) {
        Ok(n) => String::from_utf8_lossy(&buf[..n]).into_owned(),
        Err(_) => String::new(),
    }
}

#[test]
fn one_address_cannot_hold_the_web_port() {
    let rm = start("connections", &[("fairloom.webapp.max-connections-per-peer", "3")], None);
    let addr = rm.base.trim_start_matches("http://").trim_end_matches('/').to_string();
    let connect = || {
        let s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s
    };
    let mut held: Vec<TcpStream> = (0..3).map(|_| connect()).collect();
    for s in &mut held {
        assert!(ask(s).starts_with("HTTP/1.1 200"), "within the share");
    }
    let mut extra = connect();
    assert_eq!(ask(&mut extra), "", "past the share, closed unanswered");
    held.pop();
    let again = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        ask(&mut connect()).starts_with("HTTP/1.1 200")
    });
    assert!(again, "one closed, one more is let in");
}

#[test]
fn a_bad_share_is_refused_with_its_key() {
    let conf = fairloom_rm::conf::RmConf::from_site(
        [("fairloom.webapp.max-connections-per-peer".to_string(), "lots".to_string())].into_iter().collect(),
        std::path::Path::new("."),
    );
    let Err(e) = conf else { panic!("'lots' is not a number") };
    let e = e.to_string();
    assert!(e.contains("fairloom.webapp.max-connections-per-peer") && e.contains("lots"), "{e}");
}
