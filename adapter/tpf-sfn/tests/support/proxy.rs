//! A loopback proxy in front of moto that keeps every request it forwards, so a test can count
//! the operations a client asked for (`x-amz-target` names each JSON-protocol operation).

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

/// A recording proxy in front of `upstream` (`http://host:port`): its endpoint, and every byte
/// the clients sent through it.
pub fn recording_proxy(upstream: &str) -> (String, Arc<Mutex<String>>) {
    let upstream = upstream
        .strip_prefix("http://")
        .expect("moto is plain http")
        .trim_end_matches('/')
        .to_owned();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
    let log = Arc::new(Mutex::new(String::new()));
    let kept = Arc::clone(&log);
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = std::net::TcpStream::connect(&upstream) else {
                continue;
            };
            let (mut from_server, mut to_client) = (
                server.try_clone().expect("clone"),
                client.try_clone().expect("clone"),
            );
            std::thread::spawn(move || std::io::copy(&mut from_server, &mut to_client));
            let (mut client, mut server, log) = (client, server, Arc::clone(&kept));
            std::thread::spawn(move || {
                let mut buf = [0u8; 16 * 1024];
                while let Ok(n) = client.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    log.lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                    if server.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = server.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    (endpoint, log)
}
