//! A stale keep-alive connection: the server closes an idle connection while the client's
//! runtime is busy, and the next request must not be lost on it, nor ever sent twice. The
//! server is a real HTTP/1.1 server on loopback (std threads, raw bytes) that counts every
//! request it receives; the client runtime is current-thread and blocked while the close
//! arrives, so that nothing has read the close when the next request is made.

mod common;

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mcpclient::{Frame, HttpConfig, HttpTransport, Transport, TransportError};
use serde_json::{json, Value};

/// How long the server waits for a connection or a request that should come.
const WAIT: Duration = Duration::from_secs(10);
/// How long the server waits for a connection that should not come, after the last one.
const STRAY_WAIT: Duration = Duration::from_millis(500);
/// Time for the server's close to reach the client's socket while its runtime is blocked.
const CLOSE_ARRIVES: Duration = Duration::from_millis(100);

/// How the server ends the idle connection.
#[derive(Clone, Copy, Debug)]
enum Close {
    /// An orderly close (FIN), as Node's `http` and uvicorn do after their keep-alive timeout.
    Fin,
    /// A reset (RST), as a server that closes with a zero linger does.
    Reset,
}

/// What the server does after answering the first request on its first connection.
#[derive(Clone, Copy, Debug)]
enum Then {
    /// Waits for the test's signal, closes the idle connection, then answers on new ones.
    CloseIdle(Close),
    /// Reads the second request in full, then closes without answering.
    DropAfterReading,
}

/// Answers the JSON-RPC request `request` on `stream`, keeping the connection open.
fn answer(stream: &mut TcpStream, request: &Value) {
    let body = json!({"jsonrpc": "2.0", "id": request["id"], "result": {}}).to_string();
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
}

/// A connection from `listener` within `within`, if one comes.
fn accept_within(listener: &TcpListener, within: Duration) -> Option<TcpStream> {
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Ok((stream, _)) = listener.accept() {
            stream.set_nonblocking(false).unwrap();
            stream.set_read_timeout(Some(WAIT)).unwrap();
            return Some(stream);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

/// The test server: its URL, the signal to close the idle connection, the notice that it did,
/// and, when it ends, the ids of every request it received, in order.
struct Server {
    url: String,
    close: mpsc::Sender<()>,
    closed: mpsc::Receiver<()>,
    done: JoinHandle<Vec<Value>>,
}

/// A plain HTTP transport to `url`.
fn transport(url: &str) -> HttpTransport {
    HttpTransport::new(&HttpConfig {
        url: url.to_owned(),
        headers: Vec::new(),
        auth: None,
    })
    .unwrap()
}

fn server(then: Then) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (close, close_rx) = mpsc::channel();
    let (closed_tx, closed) = mpsc::channel();
    let done = std::thread::spawn(move || {
        let mut received = Vec::new();
        let mut first = accept_within(&listener, WAIT).expect("the first connection");
        let request = common::read_request(&mut first).expect("the first request");
        answer(&mut first, &request);
        received.push(request["id"].clone());
        match then {
            Then::CloseIdle(how) => {
                close_rx.recv().unwrap();
                if let Close::Reset = how {
                    socket2::SockRef::from(&first)
                        .set_linger(Some(Duration::ZERO))
                        .unwrap();
                }
                drop(first);
                closed_tx.send(()).unwrap();
            }
            Then::DropAfterReading => {
                let request = common::read_request(&mut first).expect("the second request");
                received.push(request["id"].clone());
                drop(first);
            }
        }
        // Every later connection: each request on it is counted and answered.
        let mut within = match then {
            Then::CloseIdle(_) => WAIT,
            Then::DropAfterReading => STRAY_WAIT,
        };
        while let Some(mut stream) = accept_within(&listener, within) {
            while let Some(request) = common::read_request(&mut stream) {
                answer(&mut stream, &request);
                received.push(request["id"].clone());
            }
            within = STRAY_WAIT;
        }
        received
    });
    Server {
        url,
        close,
        closed,
        done,
    }
}

fn ping(id: u64) -> Frame {
    Frame::from_value(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
}

/// Sends `ping(id)` and returns what comes back.
async fn call(transport: &mut HttpTransport, id: u64) -> Result<Frame, TransportError> {
    transport.send(&ping(id)).await.unwrap();
    tokio::time::timeout(WAIT, transport.receive())
        .await
        .expect("an answer or an error in time")
        .expect("the transport is open")
}

/// The server closed the idle connection while the client's runtime was blocked: the next
/// call does not go onto that connection, succeeds, and the server receives it exactly once.
#[test]
fn a_call_after_the_server_closed_the_idle_connection_is_received_once() {
    for how in [Close::Fin, Close::Reset] {
        let server = server(Then::CloseIdle(how));
        common::runtime().block_on(async {
            let mut transport = transport(&server.url);
            let first = call(&mut transport, 1).await.unwrap();
            assert_eq!(first.value().unwrap()["id"], 1);
            server.close.send(()).unwrap();
            // Blocks the runtime: nothing reads the close before the next call is made.
            server.closed.recv().unwrap();
            std::thread::sleep(CLOSE_ARRIVES);
            let second = call(&mut transport, 2)
                .await
                .unwrap_or_else(|e| panic!("{how:?}: {e}"));
            assert_eq!(second.value().unwrap()["id"], 2);
            drop(transport);
        });
        let received = server.done.join().unwrap();
        assert_eq!(received, [json!(1), json!(2)], "{how:?}");
    }
}

/// The server received the whole request and then dropped the connection without answering:
/// the caller gets the error and the request is not sent again.
#[test]
fn a_request_the_server_received_is_never_sent_again() {
    let server = server(Then::DropAfterReading);
    common::runtime().block_on(async {
        let mut transport = transport(&server.url);
        call(&mut transport, 1).await.unwrap();
        match call(&mut transport, 2).await {
            Err(TransportError::Http {
                request_id, status, ..
            }) => {
                assert_eq!(request_id.as_deref(), Some("2"));
                assert_eq!(status, None);
            }
            other => panic!("want the transport's error, got {other:?}"),
        }
    });
    let received = server.done.join().unwrap();
    assert_eq!(received, [json!(1), json!(2)], "each request exactly once");
}
