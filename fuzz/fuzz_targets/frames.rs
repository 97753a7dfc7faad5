//! Arbitrary bytes as a stdio stream of frames (mcpclient's line framer, as mcpx reads servers and
//! its stdio front reads clients), and each line as a frame: no panic, and what is accepted
//! keeps its text exactly and reads as a message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpclient::{Frame, FrameReader, MAX_FRAME_BYTES};

fuzz_target!(|data: &[u8]| {
    for line in data.split(|&b| b == b'\n') {
        if let Ok(frame) = Frame::parse(&String::from_utf8_lossy(line)) {
            assert_eq!(Frame::parse(frame.text()).unwrap().text(), frame.text());
            let _ = frame.head().map(|h| h.id_text().map(str::len));
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut reader = FrameReader::new(data);
        while let Some(frame) = reader.next().await {
            if let Ok(frame) = frame {
                assert!(frame.text().len() <= MAX_FRAME_BYTES);
                assert!(frame.value().is_ok());
            }
        }
    });
});
