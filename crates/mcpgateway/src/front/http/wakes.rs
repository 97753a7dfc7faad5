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
//! polls in a row, or that has spent tokio's budget for one turn, yields to the runtime, so it
//! cannot keep its worker from other tasks.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

/// The most polls in a row of one task woken while it was being polled, before it is handed
/// back to the runtime (hyper's own dispatcher loops at most 16 times a poll, then yields).
pub(super) const MAX_POLLS_AT_ONCE: usize = 8;

/// Set while the future is being polled: a wake only sets [`WOKEN`].
const POLLING: u8 = 1;
/// Set by a wake; while [`POLLING`] is set too, the future is polled again when its poll returns.
const WOKEN: u8 = 2;

/// `future`, polled again at once whenever it is woken while being polled.
pub(super) fn polled_again_when_woken<F: Future>(future: F) -> PolledAgain<F> {
    let wakes = Arc::new(Wakes {
        state: AtomicU8::new(0),
        runtime: AtomicWaker::new(),
    });
    PolledAgain {
        future: Box::pin(future),
        waker: Waker::from(wakes.clone()),
        wakes,
        #[cfg(test)]
        polled_again: 0,
    }
}

/// See [`polled_again_when_woken`].
pub(super) struct PolledAgain<F> {
    future: Pin<Box<F>>,
    wakes: Arc<Wakes>,
    /// The waker the future is polled with: [`Wakes`].
    waker: Waker,
    /// How many polls were made again at once (tests read it).
    #[cfg(test)]
    polled_again: usize,
}

/// [`POLLING`] and [`WOKEN`], and the runtime's waker. Every change of the state is a
/// read-modify-write, so that a wake and a poll always see each other's writes in one order.
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
        // Being polled: the poll finds WOKEN when it returns, and polls again. Not being polled:
        // the runtime schedules the task. A poll that ends at the same moment either sees WOKEN
        // (its compare-exchange fails) or ended first, and then this wake finds POLLING clear.
        if self.state.fetch_or(WOKEN, Ordering::AcqRel) & POLLING == 0 {
            self.runtime.wake();
        }
    }
}

impl<F: Future> Future for PolledAgain<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        // Before any pass: a wake after a pass ends then reaches this poll's waker.
        this.wakes.runtime.register(cx.waker());
        let mut inner = Context::from_waker(&this.waker);
        for pass in 0..MAX_POLLS_AT_ONCE {
            // Wakes from before this pass are answered by it.
            this.wakes.state.swap(POLLING, Ordering::AcqRel);
            if let Poll::Ready(output) = this.future.as_mut().poll(&mut inner) {
                this.wakes.state.swap(0, Ordering::AcqRel);
                return Poll::Ready(output);
            }
            if this
                .wakes
                .state
                .compare_exchange(POLLING, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Poll::Pending;
            }
            // Woken while it ran. Polled again, unless the task has spent tokio's budget for
            // one turn (its resources would only say "not now" and wake it again).
            if pass + 1 == MAX_POLLS_AT_ONCE || !tokio::task::coop::has_budget_remaining() {
                break;
            }
            #[cfg(test)]
            {
                this.polled_again += 1;
            }
        }
        // Woken on every pass, or out of budget: back to the runtime, after its other tasks.
        this.wakes.state.swap(0, Ordering::AcqRel);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    /// A runtime's waker that counts the wakes it receives.
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

    /// Woken from another thread while it is being polled (the thread is joined before the
    /// poll returns), once; ready on the next poll.
    struct WokenFromElsewhereWhileRunning {
        polls: usize,
    }

    impl Future for WokenFromElsewhereWhileRunning {
        type Output = usize;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            self.polls += 1;
            if self.polls > 1 {
                return Poll::Ready(self.polls);
            }
            let waker = cx.waker().clone();
            std::thread::spawn(move || waker.wake()).join().unwrap();
            Poll::Pending
        }
    }

    #[test]
    fn a_wake_from_another_thread_during_the_poll_is_answered_by_polling_again() {
        let runtime = Arc::new(Counting(AtomicUsize::new(0)));
        let mut task = polled_again_when_woken(WokenFromElsewhereWhileRunning { polls: 0 });
        assert_eq!(poll_once(&mut task, &runtime), Poll::Ready(2));
        assert_eq!(task.polled_again, 1);
        assert_eq!(runtime.0.load(Ordering::SeqCst), 0, "the runtime was woken");
    }

    /// Polls `future` on this thread until it is ready, parking in between; `None` when it is
    /// not ready within `within` (a lost wake).
    fn block_on_within<F: Future + Unpin>(future: &mut F, within: Duration) -> Option<F::Output> {
        struct Unpark(std::thread::Thread);
        impl Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let deadline = Instant::now() + within;
        loop {
            if let Poll::Ready(output) =
                Pin::new(&mut *future).poll(&mut Context::from_waker(&waker))
            {
                return Some(output);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            std::thread::park_timeout(deadline - now);
        }
    }

    /// What a feeding thread and a task that takes what it feeds share.
    #[derive(Default)]
    struct Feed {
        waker: Mutex<Option<Waker>>,
        fed: AtomicUsize,
        /// The latest message whose wake the feeder has made (after `wake` returned).
        woke: AtomicUsize,
        taken: AtomicUsize,
    }

    /// One message in this many, the taker's poll waits until the next message's wake has been
    /// made: a wake certain to land during a poll, whatever the scheduler does with the rest.
    const WAIT_FOR_A_WAKE_EVERY: usize = 64;
    /// How long such a poll waits for that wake at most (the test stays bounded if it never
    /// comes; the feeder then fails on its own deadline).
    const WAIT_FOR_A_WAKE_AT_MOST: Duration = Duration::from_secs(5);

    /// Takes what was fed, then runs on a little after (the window in which a wake lands while
    /// it is being polled); ready once it has taken `until`.
    struct Taker {
        feed: Arc<Feed>,
        until: usize,
        /// How many of its polls saw the next message's wake made before they returned.
        woken_while_polled: usize,
    }

    impl Future for Taker {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            // The waker left and what was fed read under one lock, which the feeder also takes
            // to feed: either it sees this waker, or this poll sees what it fed.
            let fed = {
                let mut waker = self.feed.waker.lock().unwrap();
                *waker = Some(cx.waker().clone());
                self.feed.fed.load(Ordering::SeqCst)
            };
            self.feed.taken.store(fed, Ordering::SeqCst);
            if fed == self.until {
                return Poll::Ready(());
            }
            if fed > 0 && fed % WAIT_FOR_A_WAKE_EVERY == 0 {
                let deadline = Instant::now() + WAIT_FOR_A_WAKE_AT_MOST;
                while self.feed.woke.load(Ordering::SeqCst) <= fed && Instant::now() < deadline {
                    std::thread::yield_now();
                }
                if self.feed.woke.load(Ordering::SeqCst) > fed {
                    self.get_mut().woken_while_polled += 1;
                }
            } else {
                for _ in 0..(fed % WAIT_FOR_A_WAKE_EVERY) * 8 {
                    std::hint::spin_loop();
                }
            }
            Poll::Pending
        }
    }

    #[test]
    fn wakes_racing_the_end_of_polls_are_never_lost() {
        // One message at a time, each waited for: a wake lost anywhere (during a poll, at its
        // end, between polls) leaves the feeder waiting, and the task unfinished. Bounded: the
        // messages, and a deadline for each.
        const MESSAGES: usize = 20_000;
        let feed = Arc::new(Feed::default());
        let feeding = feed.clone();
        let feeder = std::thread::spawn(move || {
            for i in 1..=MESSAGES {
                let waker = {
                    let waker = feeding.waker.lock().unwrap();
                    feeding.fed.store(i, Ordering::SeqCst);
                    waker.clone()
                };
                if let Some(waker) = waker {
                    waker.wake();
                }
                feeding.woke.store(i, Ordering::SeqCst);
                let deadline = Instant::now() + Duration::from_secs(10);
                while feeding.taken.load(Ordering::SeqCst) < i {
                    assert!(Instant::now() < deadline, "message {i} was never taken");
                    std::thread::yield_now();
                }
            }
        });
        let mut task = polled_again_when_woken(Taker {
            feed,
            until: MESSAGES,
            woken_while_polled: 0,
        });
        let done = block_on_within(&mut task, Duration::from_secs(60));
        feeder
            .join()
            .expect("a wake was lost: the feeder waited in vain");
        assert_eq!(done, Some(()), "a wake was lost: the task never finished");
        // The race was run: every poll that waited for the next wake saw it land (the others
        // raced it as the scheduler had it), and each such wake was answered by polling again.
        let waited = task.future.woken_while_polled;
        assert!(
            waited >= (MESSAGES - 1) / WAIT_FOR_A_WAKE_EVERY,
            "only {waited} polls that waited saw their wake"
        );
        assert!(
            task.polled_again >= waited,
            "{waited} wakes landed during a poll, {} were polled again",
            task.polled_again
        );
    }
}
