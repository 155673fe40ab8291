//! [`TorchesParams`] as command-line flags (the `clap` feature).
//!
//! Written by hand rather than derived because three flags (`--slice-ms`, `--slice-torches`,
//! `--no-slice`) make up one field, [`TorchesParams::slice`], which clap's derive cannot
//! express. Each flag is still declared once, here, with its help; every default is taken
//! from [`TorchesParams::default`].

use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};

use super::torches::{TimeSlice, TorchesParams};
use crate::flags::{flag, flags_by_hand, set, with_default};

flags_by_hand!(TorchesParams, augment, update);

/// Adds the torches' flags to `command`.
fn augment(command: Command) -> Command {
    let default = TorchesParams::default();
    // The default slice is a time (the chapter's 2 ms), so `--slice-ms` carries it.
    let slice_ms = match TimeSlice::default() {
        TimeSlice::Millis(ms) => ms,
        TimeSlice::Torches(_) => unreachable!("the default time slice is in milliseconds"),
    };
    command
        .arg(with_default(
            "n",
            value_parser!(u32),
            default.n,
            "Number of torches",
        ))
        .arg(with_default(
            "seconds",
            value_parser!(f64),
            default.seconds,
            "Length of the run in game seconds",
        ))
        .arg(with_default(
            "fps",
            value_parser!(f64),
            default.fps,
            "Frames per second",
        ))
        .arg(with_default(
            "burn_min",
            value_parser!(f64),
            default.burn_min,
            "Shortest burn time in seconds",
        ))
        .arg(with_default(
            "burn_max",
            value_parser!(f64),
            default.burn_max,
            "Longest burn time in seconds (burn times uniform in [min, max))",
        ))
        .arg(with_default(
            "slice_ms",
            value_parser!(f64),
            slice_ms,
            "Time slice of the chapter's time-sliced update (Listing 2), run beside polling \
                 and timers, in milliseconds of wall time per frame",
        ))
        .arg(
            flag("slice_torches")
                .value_parser(value_parser!(u32))
                .conflicts_with("slice_ms")
                .help(
                    "Slice the time-sliced update by a number of torches per frame instead \
                         (deterministic)",
                ),
        )
        .arg(
            Arg::new("no_slice")
                .long("no-slice")
                .action(ArgAction::SetTrue)
                .conflicts_with_all(["slice_ms", "slice_torches"])
                .help("Leave the time-sliced update out"),
        )
        .arg(flag("budget").value_parser(value_parser!(u32)).help(
            "Also run the timers with at most this many callbacks per frame (the rest \
                 carried over to the next frame, their lateness reported)",
        ))
}

/// Sets `params` from the parsed flags; the seed is left as it is (the command line's
/// `--seed` sets it for each run).
fn update(params: &mut TorchesParams, matches: &ArgMatches) {
    set(&mut params.n, matches, "n");
    set(&mut params.seconds, matches, "seconds");
    set(&mut params.fps, matches, "fps");
    set(&mut params.burn_min, matches, "burn_min");
    set(&mut params.burn_max, matches, "burn_max");
    if matches.get_flag("no_slice") {
        params.slice = None;
    } else if let Some(&torches) = matches.get_one::<u32>("slice_torches") {
        params.slice = Some(TimeSlice::Torches(torches));
    } else if let Some(&ms) = matches.get_one::<f64>("slice_ms") {
        params.slice = Some(TimeSlice::Millis(ms));
    }
    if matches.contains_id("budget") {
        params.budget = matches.get_one::<u32>("budget").copied();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<TorchesParams, clap::Error> {
        crate::flags::parse(args)
    }

    #[test]
    fn flags_default_to_the_library_defaults() {
        assert_eq!(parse(&[]).unwrap(), TorchesParams::default());
    }

    #[test]
    fn the_three_slice_flags_make_one_field() {
        assert_eq!(parse(&["--no-slice"]).unwrap().slice, None);
        assert_eq!(
            parse(&["--slice-torches", "50"]).unwrap().slice,
            Some(TimeSlice::Torches(50))
        );
        assert_eq!(
            parse(&["--slice-ms", "3.5"]).unwrap().slice,
            Some(TimeSlice::Millis(3.5))
        );
        assert!(parse(&["--no-slice", "--slice-ms", "3"]).is_err());
        assert!(parse(&["--slice-torches", "5", "--slice-ms", "3"]).is_err());
        let budget = parse(&["--budget", "9", "--n", "12"]).unwrap();
        assert_eq!((budget.budget, budget.n), (Some(9), 12));
    }
}
