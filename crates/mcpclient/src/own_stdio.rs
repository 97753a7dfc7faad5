//! This process's own standard input and output, for a program that speaks stdio itself (the
//! gateway's stdio front). Where they are pipes (as when a client spawns the program) they are
//! read and written as non-blocking pipes on the runtime: Tokio's own stdin and stdout go
//! through a blocking thread for every read and write, which costs a thread hand-off per frame.
//! On Windows, Tokio's (a pipe opened for synchronous I/O cannot be read any other way).

use tokio::io::{AsyncRead, AsyncWrite};

/// Standard input, standard output.
pub type OwnStdio = (
    Box<dyn AsyncRead + Unpin + Send>,
    Box<dyn AsyncWrite + Unpin + Send>,
);

/// This process's standard input and output (see the module).
#[cfg(unix)]
#[must_use]
pub fn own_stdio() -> OwnStdio {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;
    let input = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd);
    let output = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Sender::from_owned_fd);
    let input: Box<dyn AsyncRead + Unpin + Send> = match input {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdin()),
    };
    let output: Box<dyn AsyncWrite + Unpin + Send> = match output {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdout()),
    };
    (input, output)
}

/// This process's standard input and output (see the module).
#[cfg(not(unix))]
#[must_use]
pub fn own_stdio() -> OwnStdio {
    (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
}
