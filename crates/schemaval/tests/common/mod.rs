//! What the schemaval tests share: a loopback listener that records whether anybody connected.

use std::io::Read;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A listener on 127.0.0.1 that notes every connection, for proving the validator makes none.
pub(crate) struct LoopbackWatch {
    /// `http://127.0.0.1:PORT`, the base to point references at.
    pub(crate) base: String,
    connected: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    watcher: JoinHandle<()>,
}

impl LoopbackWatch {
    pub(crate) fn start() -> LoopbackWatch {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let connected = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (connected, stop) = (connected.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    if let Ok((mut stream, _)) = listener.accept() {
                        connected.store(true, Ordering::SeqCst);
                        let _ = stream.read(&mut [0u8; 64]);
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        };
        LoopbackWatch {
            base: format!("http://127.0.0.1:{port}"),
            connected,
            stop,
            watcher,
        }
    }

    /// Whether anybody connected, after giving a connection that was started time to be seen.
    pub(crate) fn finish(self) -> bool {
        std::thread::sleep(Duration::from_millis(100));
        self.stop.store(true, Ordering::SeqCst);
        self.watcher.join().unwrap();
        self.connected.load(Ordering::SeqCst)
    }
}
