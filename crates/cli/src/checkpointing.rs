//! Graceful stops and checkpoints on the command line: the signal handlers, the run in
//! stretches between checkpoints, and `warpsim resume`.
//!
//! # Ground rules
//!
//! - The first SIGINT or SIGTERM only sets a flag, which the kernel reads between events
//!   (through its [`StopHandle`]): the run ends at a safe point, every committed output is
//!   delivered, the partial report is printed, and the process exits with 128 + the
//!   signal's number. A second signal ends the process at once (`signal-hook`'s conditional
//!   shutdown): the user asked twice.
//! - A checkpoint file is written atomically (a temporary file renamed over it), so a run
//!   killed while writing leaves the previous checkpoint whole.
//! - What the model's sink had received is part of the checkpoint: every output delivered
//!   before the boundary is kept (encoded) and, on resume, replayed into the new run's sink
//!   before the kernel starts, so the scenario's results (percentiles, deaths file) are those
//!   of the uninterrupted run.
//! - The command line is stored in the file; `resume` runs it again with the flags given to
//!   it appended, and accepts only flags that cannot change the results.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use serde::de::DeserializeOwned;
use warpsim_core::{
    Checkpoint, CheckpointLabel, Committed, EventKey, LogicalProcess, LpId, OutputSink, Report,
    StopHandle,
};

/// The signal that asked the process to stop (0: none), shared with the kernels' stop
/// handle.
fn stop_flag() -> &'static Arc<AtomicUsize> {
    static FLAG: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    FLAG.get_or_init(Arc::default)
}

/// The stop handle every run of this process uses.
pub(crate) fn stop_handle() -> StopHandle {
    static HANDLE: OnceLock<StopHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| StopHandle::with_flag(Arc::clone(stop_flag())))
        .clone()
}

/// Installs the SIGINT and SIGTERM handlers (once per process).
///
/// # Errors
///
/// When the system refuses a handler.
pub(crate) fn install_signals() -> Result<()> {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    if INSTALLED.get().is_some() {
        return Ok(());
    }
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGINT, SIGTERM};
        use signal_hook::flag;
        let seen = Arc::new(std::sync::atomic::AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM] {
            // Registered first, so it sees `seen` as the previous signal left it: a second
            // signal exits at once, with the conventional code.
            flag::register_conditional_shutdown(signal, 128 + signal, Arc::clone(&seen))
                .context("cannot install a signal handler")?;
            flag::register(signal, Arc::clone(&seen)).context("cannot install a signal handler")?;
            flag::register_usize(signal, Arc::clone(stop_flag()), signal as usize)
                .context("cannot install a signal handler")?;
        }
    }
    let _ = INSTALLED.set(());
    Ok(())
}

/// The signal that stopped the process's run, if one came. (1 is what
/// [`StopHandle::stop`] stores: this process stopped its own run, after a checkpoint that
/// could not be written; the run's error then says why, and the exit code is 1, not 129.)
pub(crate) fn signal() -> Option<i32> {
    match stop_flag().load(Ordering::Relaxed) {
        0 | 1 => None,
        signal => i32::try_from(signal).ok(),
    }
}

/// Records that `signal` stopped the run (another rank heard it, over MPI), unless this
/// process heard one itself: the exit code and messages then name it.
pub(crate) fn note_signal(signal: i32) {
    if let Ok(signal) = usize::try_from(signal)
        && signal > 0
    {
        let _ = stop_flag().compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// The name of a signal, for messages.
pub(crate) fn signal_name(signal: i32) -> &'static str {
    match signal {
        2 => "SIGINT",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

/// What a checkpoint of this process's run is labelled with: the model, its parameters and
/// the command line (set before the run).
fn label_slot() -> &'static Mutex<CheckpointLabel> {
    static LABEL: OnceLock<Mutex<CheckpointLabel>> = OnceLock::new();
    LABEL.get_or_init(|| Mutex::new(CheckpointLabel::default()))
}

/// Stores the command line (the arguments after the program's name, with any config file
/// already expanded into flags) for the checkpoints of this run. The config file and the
/// resume source are left out: the flags they gave are in the list.
pub(crate) fn set_command(args: &[OsString]) {
    let mut command = Vec::new();
    let mut skip_next = false;
    for arg in args.iter().skip(1) {
        let text = arg.to_string_lossy().into_owned();
        if skip_next {
            skip_next = false;
            continue;
        }
        if text == "--config" || text == "--resume-from" {
            skip_next = true;
            continue;
        }
        if text.starts_with("--config=") || text.starts_with("--resume-from=") {
            continue;
        }
        command.push(text);
    }
    let mut label = label_slot().lock().unwrap_or_else(|e| e.into_inner());
    label.command = command;
}

/// Stores the model's name and parameters for the checkpoints of this run.
pub(crate) fn set_model(model: &str, params: &serde_json::Value) {
    let mut label = label_slot().lock().unwrap_or_else(|e| e.into_inner());
    *label = CheckpointLabel::new(model, params.to_string()).command(label.command.clone());
}

fn label() -> CheckpointLabel {
    label_slot()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// Parses `10m`, `30s`, `1h`, `500ms` or a plain number of seconds.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit {
        "" | "s" => 1.0,
        "ms" => 0.001,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "expected a duration such as 30s, 10m or 1h, got `{text}`"
            ));
        }
    };
    match number.parse::<f64>() {
        Ok(value) if value.is_finite() && value * scale >= 0.001 => {
            Ok(Duration::from_secs_f64(value * scale))
        }
        _ => Err(format!(
            "expected a duration of at least 1ms such as 30s, 10m or 1h, got `{text}`"
        )),
    }
}

/// A sink that keeps an encoded copy of every output it passes on (when `keep`), so that a
/// checkpoint can say where the outputs stood.
pub(crate) struct Recorder<'a, S> {
    inner: &'a mut S,
    log: Option<Vec<u8>>,
}

impl<'a, S> Recorder<'a, S> {
    pub(crate) fn new(inner: &'a mut S, keep: bool) -> Recorder<'a, S> {
        Recorder {
            inner,
            log: keep.then(Vec::new),
        }
    }

    /// The outputs so far, encoded.
    pub(crate) fn log(&self) -> Vec<u8> {
        self.log.clone().unwrap_or_default()
    }

    /// Delivers the outputs of a checkpoint's log again, in order (a resumed run's start).
    ///
    /// # Errors
    ///
    /// When the log does not decode (a damaged file that passed the checksum cannot get
    /// here; a model whose output type changed can).
    pub(crate) fn replay<O>(&mut self, mut bytes: &[u8]) -> Result<()>
    where
        S: OutputSink<O>,
        O: Serialize + DeserializeOwned,
    {
        while !bytes.is_empty() {
            let ((key, lp, output), rest): ((EventKey, LpId, O), &[u8]) =
                postcard::take_from_bytes(bytes)
                    .map_err(|error| anyhow!("the checkpoint's outputs do not decode: {error}"))?;
            bytes = rest;
            self.deliver(Committed { key, lp, output });
        }
        Ok(())
    }
}

impl<O: Serialize, S: OutputSink<O>> OutputSink<O> for Recorder<'_, S> {
    fn deliver(&mut self, output: Committed<O>) {
        if let Some(log) = &mut self.log {
            let before = log.len();
            if postcard::to_io(&(output.key, output.lp, &output.output), &mut *log).is_err() {
                // Keep the log decodable; the output is still delivered.
                log.truncate(before);
            }
        }
        self.inner.deliver(output);
    }
}

/// Reads the checkpoint `path` for this process's model and parameters.
///
/// # Errors
///
/// One line naming the file and what is wrong with it.
pub(crate) fn read<M>(path: &Path) -> Result<Checkpoint<M>>
where
    M: LogicalProcess + DeserializeOwned,
{
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read the checkpoint {}", path.display()))?;
    Checkpoint::read_from(std::io::BufReader::new(file), &label())
        .map_err(|error| anyhow!("{}: {error}", path.display()))
}

/// Writes `checkpoint`, already labelled, to `path` atomically, carrying `outputs` (what the
/// sink had received); returns the file's size.
fn write_labelled<M>(path: &Path, checkpoint: &mut Checkpoint<M>, outputs: Vec<u8>) -> Result<u64>
where
    M: LogicalProcess + Serialize,
{
    checkpoint.set_attachment(outputs);
    let mut size = 0;
    crate::files::write_atomic_with(path, |file| {
        let mut writer = std::io::BufWriter::new(file);
        size = checkpoint
            .write_to(&mut writer)
            .map_err(std::io::Error::other)?;
        Ok(())
    })?;
    Ok(size)
}

/// Writes checkpoints on a thread of its own, one at a time, while the run goes on from
/// them: a periodic checkpoint then costs the run the pause and a copy of the committed
/// state, not the encoding and the file's write and `fsync` (PHOLD with a million LPs: the
/// pause 0.13 s, the write 0.18 s to `/dev/shm` and 0.39 s to disk, measured; BENCHMARKS.md,
/// "Checkpoints of PHOLD with a million LPs").
///
/// A checkpoint is not announced ("checkpoint written to …") until its file is whole, and a
/// new one waits for the one before, so the file on disk is always the latest finished one.
/// Whoever starts writes must [`wait`](Self::wait) before the process ends; dropping the
/// writer waits too, but cannot report a failure.
#[derive(Default)]
pub(crate) struct Writer {
    writing: Option<std::thread::JoinHandle<Result<()>>>,
}

impl Writer {
    /// Starts writing `checkpoint` (with the outputs delivered so far) to `path`, after the
    /// previous write has finished. `events` and `time` are for the note.
    ///
    /// # Errors
    ///
    /// The previous write's failure (one line naming the file), or a thread that cannot be
    /// started.
    pub(crate) fn write<M>(
        &mut self,
        path: &Path,
        mut checkpoint: Checkpoint<M>,
        outputs: Vec<u8>,
        events: u64,
        time: f64,
    ) -> Result<()>
    where
        M: LogicalProcess + Serialize,
    {
        self.wait()?;
        let path = path.to_path_buf();
        let label = label();
        let thread = std::thread::Builder::new()
            .name("checkpoint-writer".into())
            .spawn(move || {
                checkpoint.set_label(label);
                let bytes = write_labelled(&path, &mut checkpoint, outputs)?;
                crate::out::note(&format!(
                    "checkpoint written to {} ({events} events committed, time {time}, {bytes} bytes)",
                    path.display(),
                ));
                Ok(())
            })
            .context("cannot start a thread to write the checkpoint")?;
        self.writing = Some(thread);
        Ok(())
    }

    /// Waits for the write under way, if any.
    ///
    /// # Errors
    ///
    /// Its failure, one line naming the file.
    pub(crate) fn wait(&mut self) -> Result<()> {
        match self.writing.take() {
            Some(thread) => thread
                .join()
                .unwrap_or_else(|_| Err(anyhow!("the checkpoint writer failed unexpectedly"))),
            None => Ok(()),
        }
    }
}

/// The checkpoints a run takes in place while it goes on (Time Warp's and MPI's
/// `--checkpoint-every` and `--checkpoint-at`), written like the others. A write that cannot
/// start (the previous one failed) stops the run through its stop handle and is kept in
/// [`failed`](Self::failed), the run's error; no later checkpoint is written.
pub(crate) struct TakenInPlace<'a> {
    path: Option<&'a Path>,
    writer: &'a mut Writer,
    progress: &'a crate::progress::Progress,
    ticker: &'a Ticker,
    pub(crate) failed: Option<anyhow::Error>,
}

impl<'a> TakenInPlace<'a> {
    pub(crate) fn new(
        path: Option<&'a Path>,
        writer: &'a mut Writer,
        progress: &'a crate::progress::Progress,
        ticker: &'a Ticker,
    ) -> TakenInPlace<'a> {
        TakenInPlace {
            path,
            writer,
            progress,
            ticker,
            failed: None,
        }
    }

    /// Starts writing `checkpoint` (with the outputs `sink` delivered so far).
    pub(crate) fn take<M, S>(
        &mut self,
        checkpoint: Box<Checkpoint<M>>,
        report: &Report,
        sink: &Recorder<'_, S>,
    ) where
        M: LogicalProcess + Serialize,
    {
        let Some(path) = self.path else { return };
        if self.failed.is_some() {
            return;
        }
        let written = self.writer.write(
            path,
            *checkpoint,
            sink.log(),
            report.events_committed,
            report.end_time,
        );
        match written {
            Ok(()) => {
                self.progress.checkpointed(report.end_time);
                self.ticker.restart(&stop_handle());
            }
            Err(error) => {
                self.failed = Some(error);
                stop_handle().stop();
            }
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let Err(error) = self.wait() {
            crate::out::note(&format!("{error:#}"));
        }
    }
}

/// Asks for a pause every `every` until dropped: the periodic checkpoint's clock. The
/// period counts from the end of the last checkpoint ([`Ticker::restart`]), so a run whose
/// checkpoints take longer than the period still runs a whole period between two.
pub(crate) struct Ticker {
    done: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Ticker {
    pub(crate) fn start(every: Option<Duration>, stop: StopHandle) -> Ticker {
        let Some(every) = every else {
            return Ticker {
                done: None,
                thread: None,
            };
        };
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            loop {
                match wait.recv_timeout(every) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => stop.pause(),
                    // A restart: the period starts again.
                    Ok(()) => {}
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
        });
        Ticker {
            done: Some(done),
            thread: Some(thread),
        }
    }
}

impl Ticker {
    /// After a checkpoint: forgets a pause asked for while it was written and starts the
    /// period again.
    pub(crate) fn restart(&self, stop: &StopHandle) {
        if let Some(done) = &self.done {
            let _ = stop.take_pause();
            let _ = done.send(());
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The flags `warpsim resume` accepts: those that change how a run is computed or where
/// its outputs go, never what it computes.
const RESUME_FLAGS: &[&str] = &[
    "kernel",
    "queue",
    "threads",
    "cancellation",
    "checkpoint-interval",
    "window",
    "memory",
    "partition",
    "gvt-interval",
    "balance",
    "mpi-timeout",
    "json",
    "checkpoint-file",
    "checkpoint-every",
    "checkpoint-at",
    "plot",
    "deaths",
    "dump-population",
];

/// `warpsim resume FILE [FLAGS]`: the command line to run instead — the one stored in the
/// checkpoint, then `flags`, then `--resume-from FILE`.
///
/// # Errors
///
/// A bad file, or a flag that could change the results (one line each).
pub(crate) fn resume_args(program: &OsString, rest: &[OsString]) -> Result<Vec<OsString>> {
    let Some(path) = rest.first() else {
        bail!("resume needs a checkpoint file: resume FILE [FLAGS]");
    };
    let path = PathBuf::from(path);
    let bytes = std::fs::read(&path)
        .with_context(|| format!("cannot read the checkpoint {}", path.display()))?;
    let header = warpsim_core::read_checkpoint_header(&bytes)
        .map_err(|error| anyhow!("{}: {error}", path.display()))?;
    if header.label.command.first().map(String::as_str) != Some("run") {
        bail!(
            "{}: the checkpoint stores no `run` command line to resume",
            path.display()
        );
    }
    let flags = &rest[1..];
    for flag in flags {
        let Some(text) = flag.to_str() else {
            continue;
        };
        if let Some(name) = text.strip_prefix("--") {
            let name = name.split('=').next().unwrap_or(name);
            if !RESUME_FLAGS.contains(&name) {
                bail!(
                    "resume: --{name} could change the results, so a resumed run takes it from \
                     the checkpoint (allowed: --{})",
                    RESUME_FLAGS.join(", --")
                );
            }
        } else if text.starts_with('-') && text.len() > 1 && text.parse::<f64>().is_err() {
            bail!("resume: unknown flag {text}");
        }
    }
    let mut args = vec![program.clone()];
    args.extend(header.label.command.iter().map(OsString::from));
    args.extend(flags.iter().cloned());
    args.push(OsString::from("--resume-from"));
    args.push(path.into_os_string());
    Ok(args)
}
