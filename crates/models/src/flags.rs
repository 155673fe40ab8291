//! Helpers for the parameter structs whose flags are declared by hand (the `clap` feature):
//! those where one field takes several flags (`--radius`, `--slice-ms`, …) or one flag sets
//! several fields (`--world WxH`), which clap's derive cannot express.

use clap::builder::{IntoResettable, ValueParser};
use clap::{Arg, ArgMatches};

/// A flag `--id` (underscores as dashes) that takes a value, with the value name clap's
/// derive would give it; negative numbers are values, not flags (`--end -1` is refused as a
/// bad end, by validation).
pub(crate) fn flag(id: &'static str) -> Arg {
    Arg::new(id)
        .long(id.replace('_', "-"))
        .value_name(id.to_uppercase())
        .allow_negative_numbers(true)
}

/// Implements `clap::Args` and `clap::FromArgMatches` for a parameter struct whose flags are
/// declared by hand: `$augment` adds the flags to a command, `$update` sets the fields from
/// parsed flags, and parsing starts from the struct's `Default`.
macro_rules! flags_by_hand {
    ($params:ty, $augment:path, $update:path) => {
        impl clap::Args for $params {
            fn augment_args(command: clap::Command) -> clap::Command {
                $augment(command)
            }
            fn augment_args_for_update(command: clap::Command) -> clap::Command {
                $augment(command)
            }
        }

        impl clap::FromArgMatches for $params {
            fn from_arg_matches(matches: &clap::ArgMatches) -> Result<$params, clap::Error> {
                let mut params = <$params>::default();
                $update(&mut params, matches);
                Ok(params)
            }
            fn update_from_arg_matches(
                &mut self,
                matches: &clap::ArgMatches,
            ) -> Result<(), clap::Error> {
                $update(self, matches);
                Ok(())
            }
        }
    };
}
pub(crate) use flags_by_hand;

/// Parses `args` (without the program name) as the flags of `P`.
#[cfg(test)]
pub(crate) fn parse<P: clap::Args + clap::FromArgMatches>(args: &[&str]) -> Result<P, clap::Error> {
    let command = P::augment_args(clap::Command::new("model"));
    let matches =
        command.try_get_matches_from(std::iter::once("model").chain(args.iter().copied()))?;
    P::from_arg_matches(&matches)
}

/// A flag `--id` read by `parser`, with its default (shown in the help) and its help.
pub(crate) fn with_default(
    id: &'static str,
    parser: impl IntoResettable<ValueParser>,
    default: impl ToString,
    help: &'static str,
) -> Arg {
    flag(id)
        .value_parser(parser)
        .default_value(default.to_string())
        .help(help)
}

/// `field` from flag `id` when the flag (or its default) is there.
pub(crate) fn set<T: Clone + Send + Sync + 'static>(field: &mut T, matches: &ArgMatches, id: &str) {
    if let Some(value) = matches.get_one::<T>(id) {
        *field = value.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::game::warlock::{RegenCurve, WarlockParams};
    use crate::mmc::MmcParams;
    use crate::pets::{Durations, PetsParams, Style};
    use crate::phold::PholdParams;

    #[test]
    fn derived_flags_default_to_the_library_defaults() {
        assert_eq!(parse::<PholdParams>(&[]).unwrap(), PholdParams::default());
        assert_eq!(parse::<PetsParams>(&[]).unwrap(), PetsParams::default());
        assert_eq!(parse::<MmcParams>(&[]).unwrap(), MmcParams::default());
        assert_eq!(
            parse::<WarlockParams>(&[]).unwrap(),
            WarlockParams::default()
        );
    }

    #[test]
    fn pets_durations_default_by_style() {
        let durations = |args: &[&str]| parse::<PetsParams>(args).unwrap().durations;
        assert_eq!(durations(&["--style", "events"]), Durations::Normal);
        assert_eq!(durations(&["--style", "step"]), Durations::Constant);
        assert_eq!(durations(&["--style", "jump"]), Durations::Constant);
        assert_eq!(
            durations(&["--style", "step", "--durations", "uniform"]),
            Durations::Uniform
        );
        let pets = parse::<PetsParams>(&["--style", "jump", "--end", "30"]).unwrap();
        assert_eq!((pets.style, pets.end), (Style::Jump, 30.0));
    }

    #[test]
    fn mmc_observes_customers_unless_given_an_end() {
        let mmc = parse::<MmcParams>(&["--end", "50"]).unwrap();
        assert_eq!((mmc.customers, mmc.end), (None, Some(50.0)));
        let mmc = parse::<MmcParams>(&["--customers", "7"]).unwrap();
        assert_eq!((mmc.customers, mmc.end), (Some(7), None));
        assert!(parse::<MmcParams>(&["--customers", "7", "--end", "3"]).is_err());
    }

    #[test]
    fn warlock_curve_reads_its_names() {
        let warlock = parse::<WarlockParams>(&["--curve", "logarithmic"]).unwrap();
        assert_eq!(warlock.curve, RegenCurve::Logarithmic);
        assert!(parse::<WarlockParams>(&["--curve", "cubic"]).is_err());
    }
}
