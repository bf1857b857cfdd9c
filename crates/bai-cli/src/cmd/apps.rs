//! `bai app`, `bai apps`, `bai download`, `bai upload`: a session's apps and files.

use crate::args::{AppArgs, DownloadArgs, OpenArgs, UploadArgs};
use crate::output::table;
use anyhow::{Context, Result, anyhow, bail};
use bai_client::Client;
use std::net::SocketAddr;

/// `PORT` or `HOST:PORT` (HOST defaults to 127.0.0.1, so the port is not opened to others).
pub fn parse_bind(s: &str) -> Result<SocketAddr> {
    let with_host = if s.contains(':') {
        s.to_string()
    } else {
        format!("127.0.0.1:{s}")
    };
    let (host, port) = with_host
        .rsplit_once(':')
        .ok_or_else(|| anyhow!("bind address {s:?} must be PORT or HOST:PORT"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| anyhow!("bind port {port:?} is not a port number (1-65535)"))?;
    let host = if host == "localhost" {
        "127.0.0.1"
    } else {
        host
    };
    let ip: std::net::IpAddr = host
        .trim_matches(['[', ']'])
        .parse()
        .map_err(|_| anyhow!("bind host {host:?} is not an IP address"))?;
    Ok(SocketAddr::new(ip, port))
}

/// Where a web app answers through a local proxy on `addr`: the path it is served under
/// (`/app/<session id>/<name>/`, as krunner starts it).
pub fn app_url(addr: SocketAddr, session_id: &str, app: &str) -> String {
    format!("http://{addr}/app/{session_id}/{app}/")
}

pub async fn app(client: &Client, a: &AppArgs) -> Result<i32> {
    let addr = parse_bind(&a.bind)?;
    // Fail early on an unknown app or session, before listening.
    let apps = client.apps(&a.reference).await?;
    let Some(found) = apps.iter().find(|x| x.name == a.app) else {
        let names: Vec<&str> = apps.iter().map(|x| x.name.as_str()).collect();
        bail!(
            "the app {:?} is not supported by the session; its apps: {}",
            a.app,
            names.join(", ")
        );
    };
    // The runner's own web apps answer under the path the app proxy gives them (Jupyter
    // only there), so their URL names that path; an image's own web app answers at its
    // root; a TCP app (sshd, a preopen port) is an address.
    let url = if found.protocol == "http" && bai_core::apps::serves_under_prefix(&a.app) {
        let id = client.info_rest(&a.reference).await?.id;
        app_url(addr, &id, &a.app)
    } else if found.protocol == "http" {
        format!("http://{addr}/")
    } else {
        format!("tcp://{addr}")
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    println!(
        "A local proxy to the application \"{}\" provided by the session \"{}\" is available at: {url}",
        a.app, a.reference
    );
    println!("Press Ctrl-C to stop.");
    loop {
        tokio::select! {
            conn = listener.accept() => {
                let (conn, peer) = match conn {
                    Ok(c) => c,
                    Err(e) => { eprintln!("accept failed: {e}"); continue; }
                };
                let client = client.clone();
                let (session, app) = (a.reference.clone(), a.app.clone());
                tokio::spawn(async move {
                    match client.open_tunnel(&session, &app).await {
                        Ok(t) => {
                            if let Err(e) = t.pump(conn).await {
                                eprintln!("tunnel from {peer} ended: {e}");
                            }
                        }
                        Err(e) => eprintln!("cannot open a tunnel for {peer}: {e}"),
                    }
                });
            }
            _ = tokio::signal::ctrl_c() => {
                println!("Shutting down the local proxy.");
                return Ok(0);
            }
        }
    }
}

pub async fn open(client: &Client, a: &OpenArgs) -> Result<i32> {
    let v = client
        .start_service(&a.reference, &a.app, a.path, a.port, a.public)
        .await?;
    println!("{}", v.url);
    if a.port.is_some() && !v.preferred_port_used {
        eprintln!("(the preferred port was taken; another one was used)");
    }
    Ok(0)
}

pub async fn apps(client: &Client, reference: &str) -> Result<i32> {
    let apps = client.apps(reference).await?;
    let rows: Vec<Vec<String>> = apps
        .iter()
        .map(|a| {
            let ports: Vec<String> = a.ports.iter().map(u16::to_string).collect();
            vec![a.name.clone(), a.protocol.clone(), ports.join(",")]
        })
        .collect();
    table(&["App", "Protocol", "Container port"], &rows);
    Ok(0)
}

pub async fn download(client: &Client, a: &DownloadArgs) -> Result<i32> {
    std::fs::create_dir_all(&a.dest)
        .with_context(|| format!("cannot create {}", a.dest.display()))?;
    let written = client
        .download_session_files(&a.reference, &a.files, &a.dest)
        .await?;
    for p in &written {
        println!("Downloaded {}", p.display());
    }
    Ok(0)
}

pub async fn upload(client: &Client, a: &UploadArgs) -> Result<i32> {
    client.upload(&a.reference, &a.files, &a.base_dir).await?;
    for f in &a.files {
        println!("Uploaded {}", f.display());
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_addresses() {
        assert_eq!(parse_bind("9922").unwrap().to_string(), "127.0.0.1:9922");
        assert_eq!(parse_bind("0.0.0.0:80").unwrap().to_string(), "0.0.0.0:80");
        assert_eq!(
            parse_bind("localhost:22").unwrap().to_string(),
            "127.0.0.1:22"
        );
        assert!(parse_bind("99999").is_err());
        assert!(parse_bind("example.com:22").is_err());
    }

    #[test]
    fn a_web_apps_url_names_its_path() {
        assert_eq!(
            app_url(parse_bind("8888").unwrap(), "s-1", "jupyter"),
            "http://127.0.0.1:8888/app/s-1/jupyter/"
        );
        assert_eq!(
            app_url(parse_bind("[::1]:80").unwrap(), "s-1", "ttyd"),
            "http://[::1]:80/app/s-1/ttyd/"
        );
    }
}
