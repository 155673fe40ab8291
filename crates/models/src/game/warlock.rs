//! The warlock: spells that become ready as magic points regenerate along a curve.
//!
//! The warlock of the chapter's Figure 1 has 5 magic points (MP), regenerates 2 MP per second
//! (`kMagicPointRegenTime` = 0.5 s per MP) up to 100, and knows three spells: ice (35 MP),
//! fireball (65 MP) and lightning (95 MP). So ice is ready at 15 s, fireball at 30 s and
//! lightning at 45 s. Each spell is a milestone of a [`Meter`]: its time is computed from the
//! curve, not polled, and casting a spell (spending MP) recomputes every milestone.
//!
//! The warlock's AI is a rotation — ice, fireball, lightning, ice, … — and it casts the next
//! spell of the rotation the moment that spell becomes ready. Regeneration can also follow an
//! exponential or a logarithmic curve ([`RegenCurve`]); the game loop runs at `fps` frames
//! per second but every time in the timeline is exact.
//!
//! ```
//! use warpsim_models::game::warlock::{EventKind, WarlockParams, run};
//!
//! let report = run(&WarlockParams::default()).unwrap();
//! let figure_1: Vec<_> = report.first_ready.iter().map(|r| (r.spell, r.time)).collect();
//! assert_eq!(figure_1, [("ice", Some(15.0)), ("fireball", Some(30.0)), ("lightning", Some(45.0))]);
//! let first_cast = report.timeline.iter().find(|e| e.kind == EventKind::Cast).unwrap();
//! assert_eq!((first_cast.spell, first_cast.time), ("ice", 15.0));
//! ```

use warpsim_timers::{Curve, Exponential, Linear, Logarithmic, Meter, MeterId, TimerError, Timers};

use crate::{ParamError, check_range};

/// The spells, in rotation order, with their costs in MP.
pub const SPELLS: [(&str, f64); 3] = [("ice", 35.0), ("fireball", 65.0), ("lightning", 95.0)];

/// The most MP the warlock can hold.
pub const MAX_MANA: f64 = 100.0;

/// How the warlock's magic points regenerate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RegenCurve {
    /// 2 MP per second: the chapter's Figure 1.
    #[default]
    Linear,
    /// Towards 100 MP with a time constant of 20 s: fast when empty, slow when nearly full.
    Exponential,
    /// `40 · ln(1 + s/5)` MP: slows down as the warlock fills up, without a limit.
    Logarithmic,
}

impl RegenCurve {
    fn curve(self) -> Result<Box<dyn Curve>, TimerError> {
        Ok(match self {
            RegenCurve::Linear => Box::new(Linear::new(2.0)?),
            RegenCurve::Exponential => Box::new(Exponential::new(MAX_MANA, 20.0)?),
            RegenCurve::Logarithmic => Box::new(Logarithmic::new(40.0, 5.0)?),
        })
    }
}

impl std::fmt::Display for RegenCurve {
    /// The name [`RegenCurve`]'s `from_str` reads: `linear`, `exponential` or `logarithmic`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RegenCurve::Linear => "linear",
            RegenCurve::Exponential => "exponential",
            RegenCurve::Logarithmic => "logarithmic",
        })
    }
}

impl std::str::FromStr for RegenCurve {
    type Err = ParamError;

    /// Parses `linear`, `exponential` or `logarithmic`.
    ///
    /// ```
    /// use warpsim_models::game::warlock::RegenCurve;
    /// assert_eq!("exponential".parse::<RegenCurve>().unwrap(), RegenCurve::Exponential);
    /// assert!("cubic".parse::<RegenCurve>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, ParamError> {
        match s {
            "linear" => Ok(RegenCurve::Linear),
            "exponential" => Ok(RegenCurve::Exponential),
            "logarithmic" => Ok(RegenCurve::Logarithmic),
            other => Err(ParamError::new(
                "curve",
                format!("must be linear, exponential or logarithmic (got {other:?})"),
            )),
        }
    }
}

/// The warlock demo's parameters. The defaults are the CLI scenario (the chapter's Figure 1).
///
/// With the `clap` feature the struct is also the demo's command-line flags, with these
/// defaults and docs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct WarlockParams {
    /// Length of the run in game seconds.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = WarlockParams::default().seconds))]
    pub seconds: f64,
    /// Frames per second of the game loop.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = WarlockParams::default().fps))]
    pub fps: f64,
    /// How magic points regenerate: linear, exponential or logarithmic.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = WarlockParams::default().curve,
        value_parser = <RegenCurve as std::str::FromStr>::from_str))]
    pub curve: RegenCurve,
    /// Magic points at the start (0 to 100).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = WarlockParams::default().start_mana))]
    pub start_mana: f64,
}

impl Default for WarlockParams {
    fn default() -> Self {
        WarlockParams {
            seconds: 120.0,
            fps: 60.0,
            curve: RegenCurve::Linear,
            start_mana: 5.0,
        }
    }
}

impl WarlockParams {
    /// Checks every parameter.
    ///
    /// # Errors
    ///
    /// A [`ParamError`] naming the first bad parameter.
    ///
    /// ```
    /// use warpsim_models::game::warlock::WarlockParams;
    /// let bad = WarlockParams { start_mana: 101.0, ..WarlockParams::default() };
    /// assert_eq!(bad.validate().unwrap_err().param, "start_mana");
    /// ```
    pub fn validate(&self) -> Result<(), ParamError> {
        check_range("seconds", self.seconds, 0.0, f64::MAX)?;
        check_range("fps", self.fps, 0.0, f64::MAX)?;
        if self.fps == 0.0 {
            return Err(ParamError::new("fps", "must be positive (got 0)"));
        }
        let frames = self.seconds * self.fps;
        if frames > 1e9 {
            return Err(ParamError::new(
                "seconds",
                format!("seconds × fps must be at most 10⁹ frames (got {frames})"),
            ));
        }
        check_range("start_mana", self.start_mana, 0.0, MAX_MANA)?;
        Ok(())
    }
}

/// What happened to a spell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    /// The warlock has enough MP for the spell (its milestone was reached).
    Ready,
    /// The warlock cast it.
    Cast,
}

/// One line of the spell timeline.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WarlockEvent {
    /// Game time in seconds.
    pub time: f64,
    /// The spell's name.
    pub spell: &'static str,
    /// Ready or cast.
    pub kind: EventKind,
    /// Magic points right after the event.
    pub mana: f64,
}

/// When a spell first becomes ready, as computed at the start (the chapter's Figure 1).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SpellReady {
    /// The spell's name.
    pub spell: &'static str,
    /// Seconds from the start, or `None` if the curve never gets there.
    pub time: Option<f64>,
}

/// What a warlock run produced.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WarlockReport {
    /// The parameters of the run.
    pub params: WarlockParams,
    /// Frames the game loop ran.
    pub frames: u64,
    /// Each spell's first ready time, computed before the first frame.
    pub first_ready: Vec<SpellReady>,
    /// Every ready and cast event, in time order.
    pub timeline: Vec<WarlockEvent>,
    /// Spells cast.
    pub casts: u32,
    /// Magic points at the end.
    pub final_mana: f64,
}

/// The game world the callbacks see: the timeline and the AI's place in its rotation.
#[derive(Debug)]
struct Warlock {
    mana: MeterId,
    next_in_rotation: usize,
    timeline: Vec<WarlockEvent>,
}

/// Runs the warlock for `params.seconds` of game time.
///
/// # Errors
///
/// A [`ParamError`] from [`WarlockParams::validate`].
pub fn run(params: &WarlockParams) -> Result<WarlockReport, ParamError> {
    params.validate()?;
    let mut timers = Timers::<Warlock>::new();
    let curve = params
        .curve
        .curve()
        .map_err(|e| ParamError::new("curve", e.to_string()))?;
    let meter = Meter::builder(curve)
        .value(params.start_mana)
        .max(MAX_MANA)
        .build()
        .map_err(|e| ParamError::new("start_mana", e.to_string()))?;
    let mana = timers
        .add_meter(meter)
        .map_err(|e| ParamError::new("curve", e.to_string()))?;
    let mut first_ready = Vec::new();
    for (index, (spell, cost)) in SPELLS.into_iter().enumerate() {
        let milestone = timers
            .add_milestone(mana, cost, move |warlock: &mut Warlock, ctx| {
                let time = ctx.now();
                let mut mana = ctx.meter_value(warlock.mana).unwrap_or(0.0);
                warlock.timeline.push(WarlockEvent {
                    time,
                    spell,
                    kind: EventKind::Ready,
                    mana,
                });
                if warlock.next_in_rotation == index {
                    // The milestone promises at least `cost` MP, so the spend succeeds.
                    if let Ok(left) = ctx.spend(warlock.mana, cost) {
                        mana = left;
                        warlock.next_in_rotation = (index + 1) % SPELLS.len();
                        warlock.timeline.push(WarlockEvent {
                            time,
                            spell,
                            kind: EventKind::Cast,
                            mana,
                        });
                    }
                }
            })
            .map_err(|e| ParamError::new("curve", e.to_string()))?;
        first_ready.push(SpellReady {
            spell,
            time: timers.milestone_time(milestone),
        });
    }

    let mut warlock = Warlock {
        mana,
        next_in_rotation: 0,
        timeline: Vec::new(),
    };
    let frames = (params.seconds * params.fps).round() as u64;
    let dt = 1.0 / params.fps;
    for _ in 0..frames {
        timers
            .advance(dt, &mut warlock)
            .map_err(|e| ParamError::new("fps", e.to_string()))?;
    }
    let casts = warlock
        .timeline
        .iter()
        .filter(|e| e.kind == EventKind::Cast)
        .count() as u32;
    Ok(WarlockReport {
        params: params.clone(),
        frames,
        first_ready,
        casts,
        final_mana: timers.meter_value(mana).unwrap_or(0.0),
        timeline: warlock.timeline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline(report: &WarlockReport) -> Vec<(f64, &'static str, EventKind)> {
        report
            .timeline
            .iter()
            .map(|e| (e.time, e.spell, e.kind))
            .collect()
    }

    #[test]
    fn figure_1_and_the_rotation_give_exact_times() {
        use EventKind::{Cast, Ready};
        let report = run(&WarlockParams::default()).unwrap();
        assert_eq!(report.frames, 7200);
        let first: Vec<_> = report.first_ready.iter().map(|r| r.time).collect();
        assert_eq!(first, [Some(15.0), Some(30.0), Some(45.0)]);
        // Casting ice at 15 s empties the warlock; every milestone moves.
        assert_eq!(
            timeline(&report),
            [
                (15.0, "ice", Ready),
                (15.0, "ice", Cast),
                (32.5, "ice", Ready),
                (47.5, "fireball", Ready),
                (47.5, "fireball", Cast),
                (65.0, "ice", Ready),
                (80.0, "fireball", Ready),
                (95.0, "lightning", Ready),
                (95.0, "lightning", Cast),
                (112.5, "ice", Ready),
                (112.5, "ice", Cast),
            ]
        );
        assert_eq!(report.casts, 4);
        // 7.5 s of regeneration after the last cast.
        assert!((report.final_mana - 15.0).abs() < 1e-9);
        for event in &report.timeline {
            match event.kind {
                Ready => {
                    assert!(event.mana >= SPELLS.iter().find(|s| s.0 == event.spell).unwrap().1)
                }
                Cast => assert_eq!(event.mana, 0.0),
            }
        }
    }

    #[test]
    fn a_spell_made_ready_by_a_cast_is_cast_at_the_same_time() {
        use EventKind::{Cast, Ready};
        // Full mana: ice at once; casting it leaves exactly the fireball's 65 MP, so the
        // fireball is ready, and cast, at that same time, not a frame later.
        let report = run(&WarlockParams {
            start_mana: 100.0,
            seconds: 20.0,
            ..WarlockParams::default()
        })
        .unwrap();
        assert_eq!(
            timeline(&report)[..4],
            [
                (0.0, "ice", Ready),
                (0.0, "ice", Cast),
                (0.0, "fireball", Ready),
                (0.0, "fireball", Cast),
            ]
        );
    }

    #[test]
    fn the_frame_rate_does_not_change_the_timeline() {
        let at_60 = run(&WarlockParams::default()).unwrap();
        let at_7 = run(&WarlockParams {
            fps: 7.0,
            ..WarlockParams::default()
        })
        .unwrap();
        assert_eq!(timeline(&at_60), timeline(&at_7));
    }

    #[test]
    fn other_curves_are_deterministic_and_follow_the_rotation() {
        for curve in [RegenCurve::Exponential, RegenCurve::Logarithmic] {
            let params = WarlockParams {
                curve,
                seconds: 300.0,
                ..WarlockParams::default()
            };
            let a = run(&params).unwrap();
            let b = run(&params).unwrap();
            assert_eq!(a, b);
            let casts: Vec<_> = a
                .timeline
                .iter()
                .filter(|e| e.kind == EventKind::Cast)
                .map(|e| e.spell)
                .collect();
            assert!(casts.len() >= 3, "{curve:?}: {casts:?}");
            for (i, spell) in casts.iter().enumerate() {
                assert_eq!(*spell, SPELLS[i % 3].0);
            }
            assert!(a.timeline.windows(2).all(|w| w[0].time <= w[1].time));
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        let ok = WarlockParams::default();
        let cases = [
            (
                WarlockParams {
                    fps: 0.0,
                    ..ok.clone()
                },
                "fps",
            ),
            (
                WarlockParams {
                    fps: f64::NAN,
                    ..ok.clone()
                },
                "fps",
            ),
            (
                WarlockParams {
                    seconds: -1.0,
                    ..ok.clone()
                },
                "seconds",
            ),
            (
                WarlockParams {
                    seconds: f64::INFINITY,
                    ..ok.clone()
                },
                "seconds",
            ),
            (
                WarlockParams {
                    start_mana: -1.0,
                    ..ok.clone()
                },
                "start_mana",
            ),
            (
                WarlockParams {
                    start_mana: f64::NAN,
                    ..ok.clone()
                },
                "start_mana",
            ),
        ];
        for (params, name) in cases {
            assert_eq!(run(&params).unwrap_err().param, name, "{params:?}");
        }
    }
}
