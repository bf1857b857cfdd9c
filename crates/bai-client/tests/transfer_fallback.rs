//! Data-folder transfers against a server that knows nothing of `Upgrade: bai-file` (it
//! answers as the wire contract says and ignores the header): the client's raw paths fall back
//! to the standard download and TUS upload, and the bytes arrive intact.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_client::{Client, Config};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server holds: the file to download and the upload received so far.
#[derive(Default)]
struct Store {
    download: Vec<u8>,
    upload: Vec<u8>,
    upgrades_asked: usize,
}

/// Reads one request: (request line, headers, body by Content-Length). None at the end.
async fn request(
    c: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> Option<(String, Vec<(String, String)>, Vec<u8>)> {
    let end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let mut chunk = [0u8; 65536];
        let n = c.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end - 4]).into_owned();
    buf.drain(..end);
    let mut lines = head.split("\r\n");
    let first = lines.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < len {
        let mut chunk = [0u8; 65536];
        let n = c.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body: Vec<u8> = buf.drain(..len).collect();
    Some((first, headers, body))
}

async fn serve(c: TcpStream, port: u16, store: Arc<Mutex<Store>>) {
    let mut c = c;
    let mut buf = Vec::new();
    while let Some((first, headers, body)) = request(&mut c, &mut buf).await {
        let header = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        if header("upgrade").is_some() {
            store.lock().unwrap().upgrades_asked += 1;
        }
        let mut parts = first.split(' ');
        let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let (status, extra, reply): (&str, String, Vec<u8>) =
            match (method, target.split('?').next().unwrap_or("")) {
                ("POST", p) if p.ends_with("/request-download") => (
                    "200 OK",
                    String::new(),
                    format!(r#"{{"token":"t","url":"http://127.0.0.1:{port}/storage/download"}}"#)
                        .into_bytes(),
                ),
                ("POST", p) if p.ends_with("/request-upload") => (
                    "200 OK",
                    String::new(),
                    format!(r#"{{"token":"t","url":"http://127.0.0.1:{port}/storage/upload"}}"#)
                        .into_bytes(),
                ),
                ("GET", "/storage/download") => (
                    "200 OK",
                    String::new(),
                    store.lock().unwrap().download.clone(),
                ),
                ("PATCH", "/storage/upload") => {
                    let mut s = store.lock().unwrap();
                    let offset: usize = header("upload-offset")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(usize::MAX);
                    assert_eq!(
                        offset,
                        s.upload.len(),
                        "the client resumes at the server's offset"
                    );
                    s.upload.extend_from_slice(&body);
                    (
                        "204 No Content",
                        format!("Upload-Offset: {}\r\n", s.upload.len()),
                        Vec::new(),
                    )
                }
                _ => (
                    "404 Not Found",
                    String::new(),
                    br#"{"title":"no"}"#.to_vec(),
                ),
            };
        let head = format!(
            "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\n\r\n",
            reply.len()
        );
        if c.write_all(head.as_bytes()).await.is_err() || c.write_all(&reply).await.is_err() {
            return;
        }
    }
}

#[tokio::test]
async fn transfers_fall_back_when_the_server_does_not_switch() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let data: Vec<u8> = (0..(3 << 20) + 17)
        .map(|i: usize| (i * 13 + i / 251) as u8)
        .collect();
    let store = Arc::new(Mutex::new(Store {
        download: data.clone(),
        ..Store::default()
    }));
    let s2 = store.clone();
    tokio::spawn(async move {
        while let Ok((c, _)) = listener.accept().await {
            tokio::spawn(serve(c, port, s2.clone()));
        }
    });
    let client =
        Client::new(Config::new(&format!("http://127.0.0.1:{port}"), "AK", "SK").unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("bai-client-fallback-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let local = dir.join("down.bin");
    let _ = std::fs::remove_file(&local);
    client
        .download_file("id", "down.bin", &local, |_, _| {})
        .await
        .expect("download");
    assert!(
        std::fs::read(&local).unwrap() == data,
        "the download came intact"
    );

    let up = dir.join("up.bin");
    std::fs::write(&up, &data).unwrap();
    client
        .upload_file("id", &up, "up.bin", |_, _| {})
        .await
        .expect("upload");
    let s = store.lock().unwrap();
    assert!(s.upload == data, "the upload came intact");
    // Both asked for the raw path first.
    assert_eq!(s.upgrades_asked, 2);
    drop(s);
    std::fs::remove_dir_all(&dir).unwrap();
}
