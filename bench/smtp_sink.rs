//! A real SMTP server on loopback that accepts and discards every message, for
//! `bench/consumption.sh` to measure notices per second. Prints its port on stdout and serves
//! until killed: `cargo run --release --example smtp_sink [PORT]`.

use std::net::TcpListener;

#[derive(Clone)]
struct Discard;

impl mailin_embedded::Handler for Discard {}

fn main() {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let listener = match TcpListener::bind(("127.0.0.1", port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("smtp_sink: cannot listen on 127.0.0.1:{port}: {e}");
            std::process::exit(3);
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(port);
    println!("{port}");
    let mut server = mailin_embedded::Server::new(Discard);
    server.with_name("sink.bench").with_tcp_listener(listener);
    // serve() only returns on a fatal error; its error type is not Send, so report and exit.
    if let Err(e) = server.serve() {
        eprintln!("smtp_sink: {e}");
        std::process::exit(3);
    }
}
