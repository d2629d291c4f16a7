//! A keep-alive HTTP/1.1 connection speaking JSON: the simulated NMs and AMs need thousands
//! of these, and a blocking client would need a thread each.

use std::net::SocketAddr;

use serde::de::DeserializeOwned;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::LoadError;

pub(crate) struct Conn {
    io: BufReader<TcpStream>,
    addr: SocketAddr,
}

impl Conn {
    pub(crate) async fn open(addr: SocketAddr) -> Result<Self, LoadError> {
        let s = TcpStream::connect(addr)
            .await
            .map_err(|e| LoadError::Io(std::io::Error::new(e.kind(), format!("connecting to {addr}: {e}"))))?;
        s.set_nodelay(true)?;
        Ok(Self { io: BufReader::new(s), addr })
    }

    /// One request; its status and body.
    pub(crate) async fn call(
        &mut self,
        method: &str,
        path: &str,
        body: &[u8],
        header: Option<(&str, &str)>,
    ) -> Result<(u16, Vec<u8>), LoadError> {
        let extra = header.map(|(k, v)| format!("{k}: {v}\r\n")).unwrap_or_default();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}\r\n",
            self.addr,
            body.len()
        );
        let s = self.io.get_mut();
        s.write_all(head.as_bytes()).await?;
        s.write_all(body).await?;
        let mut line = String::new();
        self.io.read_line(&mut line).await?;
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| LoadError::Http(format!("bad status line {line:?}")))?;
        let mut length = 0usize;
        loop {
            line.clear();
            if self.io.read_line(&mut line).await? == 0 {
                return Err(LoadError::Http("connection closed".to_string()));
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().map_err(|_| LoadError::Http(format!("bad Content-Length {v:?}")))?;
                }
            }
        }
        let mut out = vec![0u8; length];
        self.io.read_exact(&mut out).await?;
        Ok((status, out))
    }

    /// A JSON POST that must answer 200 with `T`.
    pub(crate) async fn json<T: DeserializeOwned>(
        &mut self,
        path: &str,
        body: &impl serde::Serialize,
        header: Option<(&str, &str)>,
    ) -> Result<T, LoadError> {
        let (status, bytes) = self.call("POST", path, &serde_json::to_vec(body)?, header).await?;
        if status != 200 {
            return Err(LoadError::Http(format!("{path}: HTTP {status}: {}", String::from_utf8_lossy(&bytes))));
        }
        Ok(serde_json::from_slice(&bytes)?)
    }
}
