//! A connection's task, woken while it is being polled, is polled again at once, on the same
//! thread, instead of being handed back to the runtime.
//!
//! hyper reads a request's body through a channel whose two ends are polled by the same task:
//! the connection's dispatcher sends the bytes, the handler (the service future, polled by that
//! dispatcher) receives them. So every request wakes its own connection's task while that task
//! runs. Tokio then treats the task as one that yielded: it goes to the back of the run queue,
//! and the runtime unparks another worker to take it. At one call in flight that other worker
//! wakes, steals the task and runs the rest of the call, the first one parks: about 1.5 more
//! context switches per call and half the call's CPU (BENCHMARKS.md, round three). Here a wake
//! that arrives while the task is being polled is noted, and the task is polled again before the
//! poll returns; the runtime sees a task that simply ran.
//!
//! A wake that arrives from elsewhere (an answer from an upstream) while the task is not being
//! polled goes to the runtime as before. A task woken on every one of [`MAX_POLLS_AT_ONCE`]
//! polls in a row yields to the runtime, so it cannot keep its worker from other tasks.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

/// The most polls in a row of one task woken while it was being polled, before it is handed
/// back to the runtime (hyper's own dispatcher loops at most 16 times a poll, then yields).
pub(super) const MAX_POLLS_AT_ONCE: usize = 8;

/// Not being polled: a wake goes to the runtime.
const IDLE: u8 = 0;
/// Being polled, not woken since the poll began.
const POLLING: u8 = 1;
/// Woken while being polled: polled again when the poll returns.
const WOKEN: u8 = 2;

/// `future`, polled again at once whenever it is woken while being polled.
pub(super) fn polled_again_when_woken<F: Future>(future: F) -> PolledAgain<F> {
    let wakes = Arc::new(Wakes {
        state: AtomicU8::new(IDLE),
        runtime: AtomicWaker::new(),
    });
    PolledAgain {
        future: Box::pin(future),
        waker: Waker::from(wakes.clone()),
        wakes,
    }
}

/// See [`polled_again_when_woken`].
pub(super) struct PolledAgain<F> {
    future: Pin<Box<F>>,
    wakes: Arc<Wakes>,
    /// The waker the future is polled with: [`Wakes`].
    waker: Waker,
}

struct Wakes {
    state: AtomicU8,
    /// The runtime's waker for the task, from its latest poll.
    runtime: AtomicWaker,
}

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Being polled: the poll sees WOKEN when it returns. Already WOKEN: nothing more to do.
        // Not being polled: the runtime schedules the task. (A poll that ends between the two
        // reads finds POLLING still set and goes back to IDLE; this wake then reads IDLE and
        // goes to the runtime, so no wake is lost.)
        match self
            .state
            .compare_exchange(POLLING, WOKEN, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) | Err(WOKEN) => {}
            Err(_) => self.runtime.wake(),
        }
    }
}

impl<F: Future> Future for PolledAgain<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        this.wakes.runtime.register(cx.waker());
        let mut inner = Context::from_waker(&this.waker);
        for _ in 0..MAX_POLLS_AT_ONCE {
            this.wakes.state.store(POLLING, Ordering::Release);
            if let Poll::Ready(output) = this.future.as_mut().poll(&mut inner) {
                this.wakes.state.store(IDLE, Ordering::Release);
                return Poll::Ready(output);
            }
            if this
                .wakes
                .state
                .compare_exchange(POLLING, IDLE, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Poll::Pending;
            }
            // Woken while it ran: polled again.
        }
        // Woken on every poll: back to the runtime, after its other tasks.
        this.wakes.state.store(IDLE, Ordering::Release);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts the polls of a task and the wakes the runtime receives.
    struct Counting(AtomicUsize);

    impl Wake for Counting {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A future that wakes itself while being polled, `times` times, then finishes.
    struct WakesItself {
        left: usize,
        polls: usize,
    }

    impl Future for WakesItself {
        type Output = usize;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            self.polls += 1;
            if self.left == 0 {
                return Poll::Ready(self.polls);
            }
            self.left -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    fn poll_once<F: Future + Unpin>(future: &mut F, runtime: &Arc<Counting>) -> Poll<F::Output> {
        let waker = Waker::from(runtime.clone());
        Pin::new(future).poll(&mut Context::from_waker(&waker))
    }

    #[test]
    fn a_task_woken_while_it_runs_is_polled_again_without_the_runtime() {
        let runtime = Arc::new(Counting(AtomicUsize::new(0)));
        let mut task = polled_again_when_woken(WakesItself { left: 3, polls: 0 });
        assert_eq!(poll_once(&mut task, &runtime), Poll::Ready(4));
        assert_eq!(runtime.0.load(Ordering::SeqCst), 0, "the runtime was woken");
    }

    #[test]
    fn a_task_woken_on_every_poll_yields_to_the_runtime() {
        let runtime = Arc::new(Counting(AtomicUsize::new(0)));
        let mut task = polled_again_when_woken(WakesItself {
            left: usize::MAX,
            polls: 0,
        });
        assert_eq!(poll_once(&mut task, &runtime), Poll::Pending);
        // Polled MAX_POLLS_AT_ONCE times, then handed back with one wake.
        assert_eq!(runtime.0.load(Ordering::SeqCst), 1);
        assert_eq!(
            task.future.left,
            usize::MAX - MAX_POLLS_AT_ONCE,
            "not polled the bounded number of times"
        );
    }

    #[test]
    fn a_wake_from_elsewhere_reaches_the_runtime() {
        let runtime = Arc::new(Counting(AtomicUsize::new(0)));
        let (send, receive) = tokio::sync::oneshot::channel::<u8>();
        let mut task = polled_again_when_woken(receive);
        assert!(poll_once(&mut task, &runtime).is_pending());
        // Sent from another thread while the task waits: the runtime is told.
        std::thread::spawn(move || send.send(7))
            .join()
            .unwrap()
            .unwrap();
        assert_eq!(runtime.0.load(Ordering::SeqCst), 1);
        assert_eq!(poll_once(&mut task, &runtime), Poll::Ready(Ok(7)));
    }

    #[test]
    fn wakes_racing_the_end_of_polls_are_never_lost() {
        // A task that waits on a channel fed by another thread as fast as it can: every message
        // is taken, whether its wake lands during a poll or after one (bounded count).
        const MESSAGES: usize = 20_000;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (send, mut receive) = tokio::sync::mpsc::unbounded_channel::<usize>();
        let feeder = std::thread::spawn(move || {
            for i in 0..MESSAGES {
                send.send(i).unwrap();
                // Now and then the receiver catches up and waits, so that sends land both while
                // it is being polled and while it is not.
                if i % 16 == 0 {
                    std::thread::yield_now();
                }
            }
        });
        let taken = rt.block_on(async move {
            tokio::time::timeout(
                std::time::Duration::from_secs(60),
                rt_spawned(async move {
                    let mut taken = 0;
                    while receive.recv().await.is_some() {
                        taken += 1;
                    }
                    taken
                }),
            )
            .await
            .expect("a wake was lost: the task never finished")
        });
        feeder.join().unwrap();
        assert_eq!(taken, MESSAGES);
    }

    async fn rt_spawned<F>(future: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        tokio::spawn(polled_again_when_woken(future)).await.unwrap()
    }
}
