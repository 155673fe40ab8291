//! The checkpoint file format.
//!
//! ```text
//! magic      8 bytes   "WSIMCKPT"
//! version    u32 LE    FORMAT_VERSION
//! header     u64 LE    length of the header, then the header (postcard)
//! body       u64 LE    length of the body, then the body (postcard)
//! checksum   u32 LE    CRC-32 of every byte before it
//! ```
//!
//! The header (label, kernel, seed, counts) decodes without the model's types, so a file of
//! another model or other parameters is refused by name before its states are decoded. The
//! body holds the states, [`LpMeta`]s, pending events, counters and the attachment. postcard
//! is compact (varints, no field names) and its format is stable across versions; the CRC
//! catches a flipped bit or a torn write that still has the right length.

use std::io::{Read, Write};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Checkpoint, CheckpointLabel, Counters, PendingEvent};
use crate::model::{LogicalProcess, LpMeta};

const MAGIC: &[u8; 8] = b"WSIMCKPT";

/// The version of the checkpoint format this build writes and reads. A file of another
/// version is refused with [`CheckpointError::Version`]. Version 2 (issue 16): the trace
/// hash's per-event function changed, so the running sum saved in a version-1 file would mix
/// two functions if the run went on.
pub const FORMAT_VERSION: u32 = 2;

/// Why a checkpoint could not be read or written. None of these leaves anything half
/// done: a refused file changes nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// Reading or writing the bytes failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The file does not start as a warpsim checkpoint.
    #[error("not a warpsim checkpoint")]
    Foreign,
    /// The file is of another format version.
    #[error("checkpoint format version {found}, but this build reads version {expected}")]
    Version {
        /// The file's version.
        found: u32,
        /// This build's.
        expected: u32,
    },
    /// The file ends early.
    #[error("truncated checkpoint: {found} bytes of at least {expected}")]
    Truncated {
        /// The bytes the file's own lengths call for.
        expected: u64,
        /// The bytes there are.
        found: u64,
    },
    /// The checksum does not match: the file was damaged.
    #[error("corrupted checkpoint (checksum mismatch)")]
    Corrupted,
    /// The checksum matches but a part does not decode (written by an incompatible build
    /// of the model's types).
    #[error("checkpoint {part} does not decode: {reason}")]
    Decode {
        /// `header` or `body`.
        part: &'static str,
        /// postcard's message.
        reason: String,
    },
    /// Written by another model.
    #[error("checkpoint of model `{found}`, not `{expected}`")]
    OtherModel {
        /// The file's model.
        found: String,
        /// The model asked for.
        expected: String,
    },
    /// Written by the same model with other parameters.
    #[error("checkpoint of `{model}` with other parameters: {found}, not {expected}")]
    OtherParameters {
        /// The model.
        model: String,
        /// The file's parameters.
        found: String,
        /// The parameters asked for.
        expected: String,
    },
    /// The model's `Serialize` failed.
    #[error("cannot encode the checkpoint: {0}")]
    Encode(String),
}

/// What a checkpoint says about itself, readable without the model's types.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct CheckpointHeader {
    /// Who wrote it and for what.
    pub label: CheckpointLabel,
    /// The kernel that took it.
    pub kernel: String,
    /// The run's seed.
    pub seed: u64,
    /// LPs.
    pub lps: u32,
    /// Events committed before the boundary.
    pub events_committed: u64,
    /// Time of the last committed event.
    pub last_time: f64,
    /// Events pending at the boundary.
    pub pending: u64,
}

#[derive(Serialize)]
struct BodyRef<'a, M, E> {
    states: &'a [M],
    metas: &'a [LpMeta],
    pending: &'a [PendingEvent<E>],
    counters: Counters,
    attachment: &'a [u8],
}

#[derive(serde::Deserialize)]
struct Body<M, E> {
    states: Vec<M>,
    metas: Vec<LpMeta>,
    pending: Vec<PendingEvent<E>>,
    counters: Counters,
    attachment: Vec<u8>,
}

impl<M> Checkpoint<M>
where
    M: LogicalProcess,
{
    /// The header this checkpoint is written with.
    pub fn header(&self) -> CheckpointHeader {
        CheckpointHeader {
            label: self.label.clone(),
            kernel: self.kernel.clone(),
            seed: self.counters.seed,
            lps: self.lps(),
            events_committed: self.counters.committed,
            last_time: self.counters.last_time,
            pending: self.pending.len() as u64,
        }
    }

    /// Writes the checkpoint to `writer` in the checkpoint format (see
    /// [`Checkpoint::read_from`]; the file is written whole, so write to a temporary file
    /// and rename it to make the write atomic).
    ///
    /// # Errors
    ///
    /// [`CheckpointError::Encode`] when a state or event does not serialise,
    /// [`CheckpointError::Io`] when writing fails.
    pub fn write_to<W: Write>(&self, mut writer: W) -> Result<u64, CheckpointError>
    where
        M: Serialize,
    {
        let encode = |error: postcard::Error| CheckpointError::Encode(error.to_string());
        let header = postcard::to_stdvec(&self.header()).map_err(encode)?;
        let body = postcard::to_stdvec(&BodyRef {
            states: &self.states,
            metas: &self.metas,
            pending: &self.pending,
            counters: self.counters,
            attachment: &self.attachment,
        })
        .map_err(encode)?;
        let mut front = Vec::with_capacity(28);
        front.extend_from_slice(MAGIC);
        front.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        front.extend_from_slice(&(header.len() as u64).to_le_bytes());
        let body_len = (body.len() as u64).to_le_bytes();
        let mut crc = crc32fast::Hasher::new();
        for part in [&front[..], &header, &body_len, &body] {
            crc.update(part);
            writer.write_all(part)?;
        }
        writer.write_all(&crc.finalize().to_le_bytes())?;
        writer.flush()?;
        Ok((front.len() + header.len() + 8 + body.len() + 4) as u64)
    }

    /// Reads a checkpoint written by [`Checkpoint::write_to`], checking that it is whole,
    /// undamaged, of this format version, and of model `label.model` with parameters
    /// `label.params` (the command line is not compared).
    ///
    /// ```
    /// use warpsim_core::{Checkpoint, CheckpointError, CheckpointLabel};
    /// # #[derive(Clone, serde::Serialize, serde::Deserialize)] struct Lp;
    /// # impl warpsim_core::LogicalProcess for Lp { type Event = (); type Output = ();
    /// #     fn on_event(&mut self, _: (), _: &mut warpsim_core::Ctx<Self>) {} }
    /// let label = CheckpointLabel::new("lp", "");
    /// let error = Checkpoint::<Lp>::read_from(&b"hello"[..], &label).unwrap_err();
    /// assert!(matches!(error, CheckpointError::Foreign));
    /// ```
    ///
    /// # Errors
    ///
    /// [`CheckpointError`]: which check failed.
    pub fn read_from<R: Read>(
        mut reader: R,
        label: &CheckpointLabel,
    ) -> Result<Checkpoint<M>, CheckpointError>
    where
        M: DeserializeOwned,
    {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        let (header, body) = split(&bytes)?;
        let header: CheckpointHeader = decode("header", header)?;
        if header.label.model != label.model {
            return Err(CheckpointError::OtherModel {
                found: header.label.model,
                expected: label.model.clone(),
            });
        }
        if header.label.params != label.params {
            return Err(CheckpointError::OtherParameters {
                model: label.model.clone(),
                found: header.label.params,
                expected: label.params.clone(),
            });
        }
        let body: Body<M, M::Event> = decode("body", body)?;
        if body.states.len() != body.metas.len()
            || body.states.len() != header.lps as usize
            || body.pending.len() as u64 != header.pending
            || body
                .pending
                .iter()
                .any(|event| event.dest.get() >= header.lps)
            || !body.pending.is_sorted_by_key(|event| event.key)
        {
            return Err(CheckpointError::Decode {
                part: "body",
                reason: "its parts do not agree with each other".into(),
            });
        }
        Ok(Checkpoint {
            label: header.label,
            kernel: header.kernel,
            states: body.states,
            metas: body.metas,
            pending: body.pending,
            counters: body.counters,
            attachment: body.attachment,
        })
    }
}

/// Reads only the header of a checkpoint (for `warpsim resume`, which learns the model and
/// command line from it), after the same checks of magic, version, length and checksum.
///
/// # Errors
///
/// As [`Checkpoint::read_from`], but for the model and parameters, which it does not check.
pub fn read_header(bytes: &[u8]) -> Result<CheckpointHeader, CheckpointError> {
    let (header, _) = split(bytes)?;
    decode("header", header)
}

fn decode<T: DeserializeOwned>(part: &'static str, bytes: &[u8]) -> Result<T, CheckpointError> {
    match postcard::from_bytes(bytes) {
        Ok(value) => Ok(value),
        Err(error) => Err(CheckpointError::Decode {
            part,
            reason: error.to_string(),
        }),
    }
}

/// The header's and the body's bytes, once the frame is checked.
fn split(bytes: &[u8]) -> Result<(&[u8], &[u8]), CheckpointError> {
    let found = bytes.len() as u64;
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(CheckpointError::Foreign);
    }
    // A length read from the file is untrusted: every sum saturates, every slice is checked.
    let word = |at: u64| -> Result<u64, CheckpointError> {
        let slice = usize::try_from(at)
            .ok()
            .and_then(|at| Some(at..at.checked_add(8)?))
            .and_then(|range| bytes.get(range));
        match slice {
            Some(word) => Ok(u64::from_le_bytes(word.try_into().unwrap_or([0; 8]))),
            None => Err(CheckpointError::Truncated {
                expected: at.saturating_add(8),
                found,
            }),
        }
    };
    let version = match bytes.get(8..12) {
        Some(word) => u32::from_le_bytes(word.try_into().unwrap_or([0; 4])),
        None => {
            return Err(CheckpointError::Truncated {
                expected: 12,
                found,
            });
        }
    };
    if version != FORMAT_VERSION {
        return Err(CheckpointError::Version {
            found: version,
            expected: FORMAT_VERSION,
        });
    }
    let header_len = word(12)?;
    let body_at = 20u64.saturating_add(header_len);
    let body_len = word(body_at)?;
    let end = body_at.saturating_add(8).saturating_add(body_len);
    let total = end.saturating_add(4);
    if found < total {
        return Err(CheckpointError::Truncated {
            expected: total,
            found,
        });
    }
    if found > total {
        return Err(CheckpointError::Corrupted);
    }
    let end = end as usize;
    let stored = u32::from_le_bytes(bytes[end..end + 4].try_into().unwrap_or([0; 4]));
    if crc32fast::hash(&bytes[..end]) != stored {
        return Err(CheckpointError::Corrupted);
    }
    let body_at = body_at as usize;
    Ok((&bytes[20..body_at], &bytes[body_at + 8..end]))
}
