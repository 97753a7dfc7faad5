//! Arbitrary bytes as the body of an SSE response (mcpclient's bounded event reader, as the
//! HTTP transport reads servers), cut into chunks at places the input chooses: no panic, the
//! same events however the body is cut, and every event's data read as a frame without panic.
//! The input's first byte seeds the cuts; the rest is the body.
#![no_main]

use bytes::Bytes;
use futures_util::StreamExt;
use libfuzzer_sys::fuzz_target;
use mcpclient::{sse_events, Frame, SseError, SseEvent};

/// The events of `body` cut into `chunks`, with an error reduced to its kind.
fn events(chunks: Vec<Bytes>) -> Vec<Result<SseEvent, &'static str>> {
    let body = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(
        sse_events(body)
            .map(|event| {
                event.map_err(|e| match e {
                    SseError::TooLarge { .. } => "too large",
                    SseError::Broken(_) => "broken",
                })
            })
            .collect(),
    )
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, body)) = data.split_first() else {
        return;
    };
    let whole = events(vec![Bytes::copy_from_slice(body)]);
    // Cuts every `step` bytes, `step` from the seed (1 cuts between every byte).
    let step = usize::from(seed % 16) + 1;
    let cut = events(body.chunks(step).map(Bytes::copy_from_slice).collect());
    assert_eq!(
        whole, cut,
        "the events depend on how the body is cut (every {step} bytes)"
    );
    for event in whole.into_iter().flatten() {
        if let Some(data) = event.data {
            if let Ok(frame) = Frame::parse(&data) {
                assert!(frame.value().is_ok());
            }
        }
    }
});
