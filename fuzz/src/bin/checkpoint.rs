//! Fuzz target: a checkpoint file (`warpsim resume FILE`), read as a PHOLD checkpoint. The
//! reader must refuse bad input with a typed error and a bounded message, never panic or
//! allocate without bound. The input is tried twice: as it is (which exercises the frame:
//! magic, version, lengths, checksum), and with its checksum recomputed, so that mutations
//! of the header and body reach the decoders instead of stopping at the checksum. The
//! expected model and parameters are taken from the file's own header, for the same reason.

use warpsim_core::{Checkpoint, CheckpointLabel, read_checkpoint_header};
use warpsim_models::phold::Phold;

fn read(bytes: &[u8]) {
    let label = match read_checkpoint_header(bytes) {
        Ok(header) => header.label,
        Err(error) => {
            assert!(error.to_string().len() < 2000, "unbounded message");
            CheckpointLabel::new("phold", "")
        }
    };
    match Checkpoint::<Phold>::read_from(bytes, &label) {
        Ok(checkpoint) => {
            // What is accepted is whole: every pending event goes to an LP of the model.
            let lps = checkpoint.lps();
            assert!(checkpoint.pending().iter().all(|event| event.dest.get() < lps));
        }
        Err(error) => {
            let message = error.to_string();
            assert!(message.len() < 2000, "unbounded message: {} bytes", message.len());
        }
    }
}

fn main() {
    afl::fuzz!(|data: &[u8]| {
        read(data);
        if data.len() >= 4 {
            let body = &data[..data.len() - 4];
            let mut fixed = body.to_vec();
            fixed.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
            read(&fixed);
        }
    });
}
