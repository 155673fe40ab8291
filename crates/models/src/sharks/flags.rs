//! [`SharksParams`] and [`RandomPopulation`] as command-line flags (the `clap` feature).
//!
//! Written by hand rather than derived because `--world W[xH]` and `--sectors NXxNY` each set
//! two fields, and `--radius` sets both radius fields, which clap's derive cannot express.
//! Each flag is still declared once, here, with its help; every default is taken from the
//! structs' `Default`.

use clap::builder::EnumValueParser;
use clap::{ArgMatches, Command, ValueEnum, value_parser};

use super::{CancelStyle, RandomPopulation, SharksParams};
use crate::flags::{flag, flags_by_hand, set, with_default};

/// `W` or `WxH`: the world's width and height.
fn parse_world(text: &str) -> Result<(f64, f64), String> {
    let number = |part: &str| {
        part.trim()
            .parse::<f64>()
            .map_err(|_| format!("expected W or WxH with numbers W, H (got `{text}`)"))
    };
    match text.split_once(['x', 'X']) {
        Some((w, h)) => Ok((number(w)?, number(h)?)),
        None => {
            let side = number(text)?;
            Ok((side, side))
        }
    }
}

/// `NXxNY`, e.g. `8x8`. Zero parses here and is refused by validation, with the rule.
fn parse_sectors(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("expected NXxNY with whole numbers, e.g. 8x8 (got `{text}`)");
    let (nx, ny) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let nx = nx.trim().parse().map_err(|_| bad())?;
    let ny = ny.trim().parse().map_err(|_| bad())?;
    Ok((nx, ny))
}

flags_by_hand!(SharksParams, augment_world, update_world);
flags_by_hand!(RandomPopulation, augment_population, update_population);

/// Adds the world's flags to `command`.
fn augment_world(command: Command) -> Command {
    let default = SharksParams::default();
    let world = if default.width == default.height {
        default.width.to_string()
    } else {
        format!("{}x{}", default.width, default.height)
    };
    let cancel = default
        .cancel
        .to_possible_value()
        .map(|value| value.get_name().to_string())
        .unwrap_or_default();
    command
        .arg(
            with_default(
                "world",
                parse_world,
                world,
                "World size, W or WxH (a torus)",
            )
            .value_name("W[xH]"),
        )
        .arg(
            with_default(
                "sectors",
                parse_sectors,
                format!("{}x{}", default.sectors_x, default.sectors_y),
                "Sector grid, NXxNY: the sectors are the LPs",
            )
            .value_name("NXxNY"),
        )
        .arg(with_default(
            "end",
            value_parser!(f64),
            default.end,
            "End of simulated time (contacts at the end still count)",
        ))
        .arg(with_default(
            "cancel",
            EnumValueParser::<CancelStyle>::new(),
            cancel,
            "How a sector withdraws the arrival of a fish that died first",
        ))
        .arg(with_default(
            "work",
            value_parser!(u32),
            default.work,
            "Busy-work iterations per event (the paper's delay loops, to raise granularity)",
        ))
}

/// Sets `params` from the parsed flags.
fn update_world(params: &mut SharksParams, matches: &ArgMatches) {
    if let Some(&(width, height)) = matches.get_one::<(f64, f64)>("world") {
        (params.width, params.height) = (width, height);
    }
    if let Some(&(nx, ny)) = matches.get_one::<(u32, u32)>("sectors") {
        (params.sectors_x, params.sectors_y) = (nx, ny);
    }
    set(&mut params.end, matches, "end");
    set(&mut params.cancel, matches, "cancel");
    set(&mut params.work, matches, "work");
}

/// Adds the random population's flags to `command`.
fn augment_population(command: Command) -> Command {
    let default = RandomPopulation::default();
    command
        .arg(with_default(
            "creatures",
            value_parser!(u32),
            default.creatures,
            "Number of creatures in the random population",
        ))
        .arg(with_default(
            "shark_fraction",
            value_parser!(f64),
            default.shark_fraction,
            "Fraction of the creatures that are sharks",
        ))
        .arg(with_default(
            "speed_min",
            value_parser!(f64),
            default.speed_min,
            "Smallest speed (units per time unit)",
        ))
        .arg(with_default(
            "speed_max",
            value_parser!(f64),
            default.speed_max,
            "Largest speed",
        ))
        .arg(
            with_default(
                "radius",
                value_parser!(f64),
                default.radius_min,
                "Attack radius of every shark (or give --radius-min and --radius-max)",
            )
            .conflicts_with_all(["radius_min", "radius_max"]),
        )
        .arg(
            flag("radius_min")
                .value_parser(value_parser!(f64))
                .requires("radius_max")
                .help("Smallest attack radius (radii uniform in [min, max])"),
        )
        .arg(
            flag("radius_max")
                .value_parser(value_parser!(f64))
                .requires("radius_min")
                .help("Largest attack radius"),
        )
}

/// Sets `population` from the parsed flags.
fn update_population(population: &mut RandomPopulation, matches: &ArgMatches) {
    set(&mut population.creatures, matches, "creatures");
    set(&mut population.shark_fraction, matches, "shark_fraction");
    set(&mut population.speed_min, matches, "speed_min");
    set(&mut population.speed_max, matches, "speed_max");
    // `--radius` gives every shark one radius; `--radius-min` and `--radius-max` (which
    // clap requires together and refuses beside `--radius`) a range.
    let radius = matches.get_one::<f64>("radius").copied();
    let min = matches.get_one::<f64>("radius_min").copied().or(radius);
    let max = matches.get_one::<f64>("radius_max").copied().or(radius);
    if let (Some(min), Some(max)) = (min, max) {
        (population.radius_min, population.radius_max) = (min, max);
    }
}

#[cfg(test)]
mod tests {
    use clap::{Args, FromArgMatches};

    use super::*;

    fn parse(args: &[&str]) -> Result<(SharksParams, RandomPopulation), clap::Error> {
        let command =
            RandomPopulation::augment_args(SharksParams::augment_args(Command::new("sharks")));
        let matches =
            command.try_get_matches_from(std::iter::once("sharks").chain(args.iter().copied()))?;
        Ok((
            SharksParams::from_arg_matches(&matches)?,
            RandomPopulation::from_arg_matches(&matches)?,
        ))
    }

    #[test]
    fn world_and_sectors_parse() {
        assert_eq!(parse_world("65536"), Ok((65536.0, 65536.0)));
        assert_eq!(parse_world("100x50"), Ok((100.0, 50.0)));
        assert!(parse_world("big").is_err());
        assert_eq!(parse_sectors("8x8"), Ok((8, 8)));
        assert_eq!(parse_sectors("0x3"), Ok((0, 3)));
        assert!(parse_sectors("8").is_err());
        assert!(parse_sectors("-1x3").is_err());
    }

    #[test]
    fn flags_default_to_the_library_defaults() {
        assert_eq!(
            parse(&[]).unwrap(),
            (SharksParams::default(), RandomPopulation::default())
        );
    }

    #[test]
    fn pair_flags_set_two_fields() {
        let (params, population) = parse(&[
            "--world",
            "100x50",
            "--sectors",
            "4x3",
            "--radius-min",
            "1",
            "--radius-max",
            "2",
        ])
        .unwrap();
        assert_eq!((params.width, params.height), (100.0, 50.0));
        assert_eq!((params.sectors_x, params.sectors_y), (4, 3));
        assert_eq!((population.radius_min, population.radius_max), (1.0, 2.0));
        let (_, population) = parse(&["--radius", "7"]).unwrap();
        assert_eq!((population.radius_min, population.radius_max), (7.0, 7.0));
        assert!(parse(&["--radius", "3", "--radius-min", "1", "--radius-max", "2"]).is_err());
        assert!(parse(&["--radius-min", "1"]).is_err());
    }
}
